// host_matrix.hpp — the inputs of the peer benchmarks (oneDNN, OpenBLAS), which take plain
// host arrays: uniform random matrices in [-1, 1), as catalyst-kernels-bench uses, and the
// f32 <-> bf16 conversions for oneDNN's bf16 product.
#pragma once

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace catalyst::bench {

inline std::vector<float> random_matrix(int64_t elements, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(elements));
  for (float& v : values) v = uniform(generator);
  return values;
}

// Round to nearest, ties to even (the inputs here are finite, so NaN needs no care).
inline uint16_t bf16_from_float(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

inline float float_from_bf16(uint16_t value) {
  const uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result = 0;
  std::memcpy(&result, &bits, sizeof result);
  return result;
}

}  // namespace catalyst::bench
