// cpp_consumer.cpp — a C++ program built against an installed Catalyst with
// find_package(Catalyst) and Catalyst::cpp only: a product, a gradient through autograd and
// an error caught as catalyst::Error, on the default device. Exit status 0 on success.
#include <catalyst/catalyst.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  try {
    catalyst::Runtime runtime;
    auto device = runtime.default_device();
    auto a = catalyst::Tensor::from_vector<float>(device, {2, 2}, {1, 2, 3, 4});
    auto b = catalyst::Tensor::from_vector<float>(device, {2, 2}, {5, 6, 7, 8});
    const std::vector<float> product = catalyst::matmul(a, b).to_vector<float>();
    const std::vector<float> expected = {19, 22, 43, 50};
    if (product != expected) {
      std::fprintf(stderr, "matmul gave %g %g %g %g, expected 19 22 43 50\n", product[0], product[1], product[2],
                   product[3]);
      return 1;
    }

    auto w = catalyst::Tensor::from_vector<float>(device, {2}, {0.5f, -1.0f});
    w.set_requires_grad();
    catalyst::sum(catalyst::exp(w) * w).backward();  // d/dw = exp(w) (1 + w)
    const std::vector<float> grad = w.grad().to_vector<float>();
    const float want[2] = {std::exp(0.5f) * 1.5f, 0.0f};
    for (int i = 0; i < 2; ++i) {
      if (std::fabs(grad[i] - want[i]) > 1e-5f) {
        std::fprintf(stderr, "grad[%d] = %g, expected %g\n", i, grad[i], want[i]);
        return 1;
      }
    }

    bool caught = false;
    try {
      auto c = catalyst::Tensor::from_vector<float>(device, {3}, {1, 2, 3});
      (void)catalyst::matmul(a, c.reshape({3, 1}));  // 2x2 @ 3x1: shapes do not match
    } catch (const catalyst::Error& error) {
      caught = true;
    }
    if (!caught) {
      std::fprintf(stderr, "a matmul of mismatched shapes did not throw catalyst::Error\n");
      return 1;
    }
  } catch (const catalyst::Error& error) {
    std::fprintf(stderr, "unexpected catalyst::Error: %s\n", error.what());
    return 1;
  }
  std::puts("cpp_consumer: ok");
  return 0;
}
