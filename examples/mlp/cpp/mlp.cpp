// mlp.cpp — the tiny MLP of examples/mlp/README.md on the C++ binding: the reference every
// other language's version must match (the mlp_examples_agree test). Each step prints
// `step <t> loss <value>`; nothing else goes to stdout.
#include <catalyst/catalyst.hpp>

#include <cstdio>
#include <exception>
#include <vector>

namespace {

using catalyst::Tensor;

constexpr int kSamples = 64, kFeatures = 4, kHidden = 16, kClasses = 3, kSteps = 50;

std::vector<float> features() {
  std::vector<float> x(kSamples * kFeatures);
  for (int i = 0; i < kSamples; ++i) {
    for (int j = 0; j < kFeatures; ++j) {
      const int k = (7 * i + 3 * j) % 13;
      x[i * kFeatures + j] = static_cast<float>(k / 6.5 - 1.0);
    }
  }
  return x;
}

std::vector<int32_t> labels() {
  std::vector<int32_t> y(kSamples);
  for (int i = 0; i < kSamples; ++i) y[i] = ((7 * i) % 13 + (7 * i + 9) % 13) % 3;
  return y;
}

// value(r, c) = float32(((multiplier * (cols*r + c)) % modulus) / modulus * 0.8 - 0.4)
std::vector<float> weights(int rows, int cols, int multiplier, int modulus) {
  std::vector<float> w(rows * cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      w[r * cols + c] = static_cast<float>(((multiplier * (cols * r + c)) % modulus) / double(modulus) * 0.8 - 0.4);
    }
  }
  return w;
}

struct Parameter {
  Tensor value, exp_avg, exp_avg_sq;
};

int run() {
  catalyst::Runtime runtime;
  const catalyst::Device device = runtime.default_device();
  const Tensor x = Tensor::from_vector<float>(device, {kSamples, kFeatures}, features());
  const Tensor y = Tensor::from_vector<int32_t>(device, {kSamples}, labels());
  std::vector<Parameter> params;
  auto add_parameter = [&](Tensor value) {
    const catalyst::Shape shape = value.shape();
    value.set_requires_grad(true);
    params.push_back({value, Tensor::zeros(device, CTL_DTYPE_F32, shape), Tensor::zeros(device, CTL_DTYPE_F32, shape)});
  };
  add_parameter(Tensor::from_vector<float>(device, {kFeatures, kHidden}, weights(kFeatures, kHidden, 37, 101)));
  add_parameter(Tensor::zeros(device, CTL_DTYPE_F32, {kHidden}));
  add_parameter(Tensor::from_vector<float>(device, {kHidden, kClasses}, weights(kHidden, kClasses, 53, 97)));
  add_parameter(Tensor::zeros(device, CTL_DTYPE_F32, {kClasses}));
  const Tensor &w1 = params[0].value, &b1 = params[1].value, &w2 = params[2].value, &b2 = params[3].value;

  for (int t = 1; t <= kSteps; ++t) {
    const Tensor h = catalyst::relu(catalyst::add(catalyst::matmul(x, w1), b1));
    const Tensor logits = catalyst::add(catalyst::matmul(h, w2), b2);
    const Tensor loss = catalyst::cross_entropy(logits, y);
    loss.backward();
    const float loss_value = loss.to_vector<float>()[0];
    for (Parameter& p : params) {
      ctl_adamw_attrs attrs{};
      attrs.struct_size = CTL_ADAMW_ATTRS_STRUCT_SIZE;
      attrs.lr = 0.01;
      attrs.beta1 = 0.9;
      attrs.beta2 = 0.999;
      attrs.eps = 1e-8;
      attrs.weight_decay = 0.01;
      attrs.step = static_cast<uint64_t>(t);
      const Tensor grad = p.value.grad();
      catalyst::run_into(CTL_OP_ADAMW_STEP, {&grad}, &attrs, {&p.value, &p.exp_avg, &p.exp_avg_sq});
    }
    for (Parameter& p : params) p.value.zero_grad();
    std::printf("step %d loss %.9g\n", t, static_cast<double>(loss_value));
  }
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mlp_cpp: %s\n", e.what());
    return 1;
  }
}
