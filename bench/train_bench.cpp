// train_bench.cpp — `catalyst-train-bench mlp|gpt`: times training steps of two small models
// on a Catalyst device through the C++ binding and prints one JSON line. Its twin,
// torch_train_bench.py, trains the same models in PyTorch and prints the same line;
// compare_training.sh runs both and prints the table (see bench/README.md).
//
//   mlp  784-512-512-10 with ReLU, cross-entropy, SGD (momentum 0.9, lr 0.01), batch 128
//   gpt  nn::GPT (vocab 256, context 128, width 128, 4 heads, 4 layers), batch 16, AdamW
//        (lr 3e-4, betas 0.9/0.95, weight decay 0.1), gradients clipped to norm 1.0
//
// Every step: forward, loss, backward, (clip), optimizer step, zero_grad, and loss.item(),
// which copies the loss to the host and so waits for the step's work to finish before the
// clock stops. Inputs are random (fixed seed) and made before the first step.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "catalyst/catalyst.hpp"
#include "catalyst/nn.hpp"
#include "catalyst/optim.hpp"
#include "catalyst/text_data.hpp"
#include "flags.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string model;
  std::string device;
  int64_t steps = 20;
  int64_t warmup = 2;
  uint64_t seed = 1234;
};

void usage(FILE* out) {
  std::fprintf(out,
               "usage: catalyst-train-bench mlp|gpt [--steps N] [--warmup W] [--device SPEC] [--seed S]\n"
               "\n"
               "Runs W untimed training steps, then N timed ones, and prints one JSON line with the\n"
               "median step time, steps per second and samples (mlp) or tokens (gpt) per second.\n"
               "  mlp  784-512-512-10 ReLU MLP, cross-entropy, SGD momentum 0.9 lr 0.01, batch 128, f32\n"
               "  gpt  GPT vocab 256, context 128, width 128, 4 heads, 4 layers, batch 16, AdamW, f32\n"
               "  --steps N      timed steps (default 20)\n"
               "  --warmup W     untimed steps first (default 2)\n"
               "  --device SPEC  cpu, cpu:1, reference, an index, ... (default: the default device)\n"
               "  --seed S       seed of the weights and the random data (default 1234)\n");
}

bool parse(int argc, char** argv, Options* o, std::string* error) {
  catalyst::examples::Flags flags;
  bool help = false;
  flags.add_switch("--help", &help);
  flags.add_switch("-h", &help);
  flags.add("--steps", &o->steps);
  flags.add("--warmup", &o->warmup);
  flags.add("--device", &o->device);
  flags.add("--seed", &o->seed);
  std::vector<std::string> models;
  if (!flags.parse(argc, argv, 1, &models, error)) return false;
  if (help) {
    usage(stdout);
    std::exit(0);
  }
  for (const std::string& m : models) {
    if (!o->model.empty() || (m != "mlp" && m != "gpt")) {
      *error = "unknown argument '" + m + "'";
      return false;
    }
    o->model = m;
  }
  if (o->model.empty()) {
    *error = "name a model: mlp or gpt";
    return false;
  }
  if (o->steps < 1 || o->warmup < 0) {
    *error = "--steps must be at least 1 and --warmup at least 0";
    return false;
  }
  return true;
}

std::vector<int32_t> random_ids(uint64_t& state, size_t count, int32_t classes) {
  std::vector<int32_t> ids(count);
  for (int32_t& id : ids) id = static_cast<int32_t>(catalyst::splitmix64(state) % static_cast<uint64_t>(classes));
  return ids;
}

// A few distinct batches, made before the clock starts; the steps cycle through them.
constexpr int kBatches = 4;

// One training step; returns the loss (read with item(), so the step's work is done).
using Step = std::function<double()>;

struct Result {
  int64_t parameters = 0;
  std::vector<double> step_seconds;
  double first_loss = 0;
  double last_loss = 0;
};

Result time_steps(const Options& o, const Step& step) {
  Result r;
  for (int64_t i = 0; i < o.warmup; ++i) {
    const double loss = step();
    if (i == 0) r.first_loss = loss;
  }
  for (int64_t i = 0; i < o.steps; ++i) {
    const auto t0 = Clock::now();
    const double loss = step();
    r.step_seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (i == 0 && o.warmup == 0) r.first_loss = loss;
    r.last_loss = loss;
  }
  return r;
}

// A string as a JSON string literal (device names are free text).
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += b;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int64_t count_parameters(const catalyst::nn::NamedTensors& params) {
  int64_t count = 0;
  for (const auto& [name, p] : params) count += p.numel();
  return count;
}

Result bench_mlp(const catalyst::Runtime& rt, catalyst::Device device, const Options& o, int64_t batch) {
  catalyst::nn::Init init(device, CTL_DTYPE_F32, o.seed);
  const catalyst::nn::Linear fc1(init, 784, 512), fc2(init, 512, 512), fc3(init, 512, 10);
  catalyst::nn::NamedTensors params;
  fc1.collect("fc1", params);
  fc2.collect("fc2", params);
  fc3.collect("fc3", params);
  catalyst::optim::SGD optimizer(params, 0.9);

  std::vector<catalyst::Tensor> inputs, labels;
  uint64_t state = o.seed;
  for (int i = 0; i < kBatches; ++i) {
    inputs.push_back(catalyst::random(device, CTL_DTYPE_F32, {batch, 784}, true, o.seed + 1,
                                      static_cast<uint64_t>(i * batch * 784), 0.0, 1.0));
    labels.push_back(catalyst::Tensor::from_vector<int32_t>(device, {batch}, random_ids(state, size_t(batch), 10)));
  }
  int64_t n = 0;
  Result r = time_steps(o, [&]() {
    const size_t b = static_cast<size_t>(n++ % kBatches);
    const catalyst::Tensor h1 = fc1(inputs[b], CTL_ACTIVATION_RELU);
    const catalyst::Tensor h2 = fc2(h1, CTL_ACTIVATION_RELU);
    const catalyst::Tensor loss = catalyst::cross_entropy(fc3(h2), labels[b]);
    loss.backward();
    optimizer.step(rt, 0.01);
    optimizer.zero_grad();
    return loss.item();
  });
  r.parameters = count_parameters(params);
  return r;
}

Result bench_gpt(const catalyst::Runtime& rt, catalyst::Device device, const Options& o, int64_t batch,
                 const catalyst::nn::GPTConfig& config) {
  const catalyst::nn::GPT model(device, CTL_DTYPE_F32, config, o.seed);
  const auto params = model.parameters();
  catalyst::optim::AdamWOptions adam;
  adam.beta1 = 0.9;
  adam.beta2 = 0.95;
  adam.weight_decay = 0.1;
  catalyst::optim::AdamW optimizer(params, adam);

  std::vector<catalyst::Tensor> ids, targets;
  uint64_t state = o.seed;
  const size_t count = static_cast<size_t>(batch * config.context);
  const int32_t vocab = static_cast<int32_t>(config.vocab);
  for (int i = 0; i < kBatches; ++i) {
    ids.push_back(
        catalyst::Tensor::from_vector<int32_t>(device, {batch, config.context}, random_ids(state, count, vocab)));
    targets.push_back(
        catalyst::Tensor::from_vector<int32_t>(device, {batch, config.context}, random_ids(state, count, vocab)));
  }
  int64_t n = 0;
  Result r = time_steps(o, [&]() {
    const size_t b = static_cast<size_t>(n++ % kBatches);
    const catalyst::Tensor loss = model.loss(ids[b], targets[b]);
    loss.backward();
    catalyst::optim::clip_grad_norm(rt, params, 1.0);
    optimizer.step(rt, 3e-4);
    optimizer.zero_grad();
    return loss.item();
  });
  r.parameters = count_parameters(params);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string error;
  if (!parse(argc, argv, &o, &error)) {
    std::fprintf(stderr, "catalyst-train-bench: %s\n\n", error.c_str());
    usage(stderr);
    return 2;
  }
  try {
    catalyst::RuntimeOptions runtime_options;
    runtime_options.enable_reference_device = o.device == "reference";  // core's slow, exact kernels
    catalyst::Runtime rt(runtime_options);
    const catalyst::Device device = o.device.empty() ? rt.default_device() : rt.device(o.device);
    const bool gpt = o.model == "gpt";
    const catalyst::nn::GPTConfig config{256, 128, 128, 4, 4};
    const int64_t batch = gpt ? 16 : 128;
    const Result r = gpt ? bench_gpt(rt, device, o, batch, config) : bench_mlp(rt, device, o, batch);

    const double step = median(r.step_seconds);
    const double per_step = gpt ? double(batch * config.context) : double(batch);
    std::printf(
        "{\"framework\": \"catalyst\", \"model\": \"%s\", \"plugin\": %s, \"device\": %s, \"parameters\": %lld, "
        "\"batch\": %lld, \"steps\": %lld, "
        "\"warmup\": %lld, \"median_step_seconds\": %.6g, \"min_step_seconds\": %.6g, \"max_step_seconds\": %.6g, "
        "\"steps_per_second\": %.6g, \"%s\": %.6g, \"first_loss\": %.6g, \"last_loss\": %.6g}\n",
        o.model.c_str(), json_string(device.plugin()).c_str(), json_string(device.name()).c_str(),
        static_cast<long long>(r.parameters), static_cast<long long>(batch), static_cast<long long>(o.steps),
        static_cast<long long>(o.warmup), step, *std::min_element(r.step_seconds.begin(), r.step_seconds.end()),
        *std::max_element(r.step_seconds.begin(), r.step_seconds.end()), 1.0 / step,
        gpt ? "tokens_per_second" : "samples_per_second", per_step / step, r.first_loss, r.last_loss);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "catalyst-train-bench: %s\n", e.what());
    return 1;
  }
}
