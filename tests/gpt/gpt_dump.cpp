// gpt_dump.cpp — writes a 2-layer GPT's weights, a batch, its loss and every parameter
// gradient, computed by Catalyst in f64, to a safetensors file. test_gpt_vs_torch.py then
// rebuilds the same model in PyTorch from those weights and compares loss and gradients.
//
// usage: gpt_dump PLUGIN_FILE DEVICE OUTPUT.safetensors
#include <cstdio>
#include <map>
#include <random>

#include "catalyst/catalyst.hpp"
#include "catalyst/nn.hpp"
#include "catalyst/safetensors.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: gpt_dump PLUGIN_FILE DEVICE OUTPUT.safetensors\n");
    return 2;
  }
  try {
    catalyst::RuntimeOptions ro;
    ro.plugin_paths = {argv[1]};
    ro.disable_discovery = true;
    ro.enable_reference_device = true;
    catalyst::Runtime rt(ro);
    catalyst::Device device = rt.device(argv[2]);
    const catalyst::nn::GPTConfig config{256, 8, 16, 2, 2};
    const int64_t batch = 3, T = 7;  // T below the context: the mask and positions are sliced
    catalyst::nn::GPT model(device, CTL_DTYPE_F64, config, 7);
    std::mt19937_64 rng(11);
    std::vector<int64_t> ids(batch * T), targets(batch * T);
    for (auto& v : ids) v = static_cast<int64_t>(rng() % 256);
    for (auto& v : targets) v = static_cast<int64_t>(rng() % 256);
    auto x = catalyst::Tensor::from_vector<int64_t>(device, {batch, T}, ids);
    auto y = catalyst::Tensor::from_vector<int64_t>(device, {batch, T}, targets);
    catalyst::Tensor loss = model.loss(x, y);
    loss.backward();
    std::vector<std::pair<std::string, catalyst::Tensor>> out = {{"ids", x}, {"targets", y}, {"loss", loss.detach()}};
    for (const auto& [name, p] : model.parameters()) {
      out.emplace_back("param." + name, p.detach());
      out.emplace_back("grad." + name, p.grad());
    }
    const std::map<std::string, std::string> meta = {
        {"context", "8"}, {"width", "16"}, {"heads", "2"}, {"layers", "2"}, {"device", argv[2]}};
    catalyst::save_safetensors(argv[3], out, meta);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpt_dump: %s\n", e.what());
    return 1;
  }
}
