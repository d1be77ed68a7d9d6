// optim_test.cpp — the C++ optimizers (bindings/cpp/include/catalyst/optim.hpp) against their
// update written out here, on the CPU plugin and on the reference device: SGD with and
// without momentum over three steps (PyTorch's rule: the buffer starts at zero, so the
// first step moves by lr * g), gradients that are cleared between steps, and a parameter
// that got no gradient left alone.
#include <gtest/gtest.h>

#include <catalyst/catalyst.hpp>
#include <catalyst/nn.hpp>
#include <catalyst/optim.hpp>
#include <string>
#include <vector>

namespace {

class Optim : public ::testing::TestWithParam<const char*> {
 protected:
  catalyst::Device device() {
    return std::string(GetParam()) == "reference" ? runtime_.device("reference") : runtime_.default_device();
  }
  catalyst::Runtime runtime_{catalyst::RuntimeOptions{{CTL_TEST_CPU_PLUGIN}, true, true}};
};

// loss = sum(w * k) gives dloss/dw = k whatever w is, so each step's gradient is known.
TEST_P(Optim, SgdMatchesTheUpdateWrittenOut) {
  const std::vector<double> w0 = {0.5, -1.25, 2.0, 0.0}, k = {1.0, -2.0, 0.25, 3.0};
  for (const double momentum : {0.0, 0.9}) {
    SCOPED_TRACE("momentum " + std::to_string(momentum));
    const catalyst::Device dev = device();
    catalyst::Tensor w = catalyst::Tensor::from_vector<double>(dev, {4}, w0);
    w.set_requires_grad(true);
    catalyst::Tensor unused = catalyst::Tensor::from_vector<double>(dev, {2}, {7.0, 8.0});
    unused.set_requires_grad(true);
    const catalyst::Tensor kt = catalyst::Tensor::from_vector<double>(dev, {4}, k);
    catalyst::optim::SGD sgd({{"w", w}, {"unused", unused}}, momentum);
    std::vector<double> want = w0, buf(4, 0.0);
    const double lr = 0.1;
    for (int step = 1; step <= 3; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      catalyst::sum(w * kt).backward();
      sgd.step(runtime_, lr);
      sgd.zero_grad();
      for (size_t i = 0; i < want.size(); ++i) {
        buf[i] = momentum * buf[i] + k[i];
        want[i] -= lr * (momentum != 0 ? buf[i] : k[i]);
      }
      const std::vector<double> got = w.to_vector<double>();
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "element " << i;
    }
    EXPECT_EQ(unused.to_vector<double>(), (std::vector<double>{7.0, 8.0})) << "a parameter without a gradient moved";
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Optim, ::testing::Values("reference", "cpu"));

}  // namespace
