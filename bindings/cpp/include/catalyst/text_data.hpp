// text_data.hpp — byte-level text data for character models, header-only.
//
//   catalyst::ByteDataset data("input.txt", /*min_bytes=*/1024);     // 90% train, 10% validation
//   catalyst::WindowSampler sampler(data, catalyst::Split::kTrain, /*seed=*/1337);
//   sampler.next_batch(batch, context, &inputs, &targets);           // token ids 0..255
//   uint64_t saved = sampler.state();                                // into the checkpoint
//   double baseline = data.unigram_entropy_nats();                   // loss to beat, in nats
//
// The sampler's whole state is one uint64_t (a splitmix64 counter), so a training run resumed
// from a checkpoint draws exactly the batches the uninterrupted run would have drawn.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "catalyst/catalyst.hpp"

namespace catalyst {

// splitmix64 (Steele, Lea and Flood, 2014): a Weyl counter through a 64-bit finaliser.
// The whole generator is `state`, which this advances.
inline uint64_t splitmix64(uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

enum class Split { kTrain, kValidation };

inline const char* split_name(Split split) {
  return split == Split::kTrain ? "train" : "validation";
}

// How often each byte value occurs in `bytes` (256 entries summing to 1; all 0 when empty).
inline std::vector<double> byte_frequencies(std::span<const uint8_t> bytes) {
  std::vector<double> counts(256, 0.0);
  for (const uint8_t b : bytes) counts[b] += 1.0;
  if (!bytes.empty()) {
    for (double& c : counts) c /= static_cast<double>(bytes.size());
  }
  return counts;
}

// The cross-entropy, in nats per byte, of a unigram model fitted to `train` (add-one smoothed,
// so a byte never seen in training costs log(|train| + 256) rather than infinity) and
// evaluated on `evaluate`. The loss of a model that knows character frequencies and nothing
// else: the number a sequence model's validation loss should beat.
inline double unigram_cross_entropy_nats(std::span<const uint8_t> train, std::span<const uint8_t> evaluate) {
  if (evaluate.empty()) {
    throw Error(CTL_STATUS_INVALID_ARGUMENT, "unigram_cross_entropy_nats: there are no bytes to evaluate on");
  }
  std::vector<double> train_counts(256, 0.0), evaluate_counts(256, 0.0);
  for (const uint8_t b : train) train_counts[b] += 1.0;
  for (const uint8_t b : evaluate) evaluate_counts[b] += 1.0;
  const double total = static_cast<double>(train.size()) + 256.0;
  double nats = 0.0;
  for (int b = 0; b < 256; ++b) {
    if (evaluate_counts[b] > 0) nats -= evaluate_counts[b] * std::log((train_counts[b] + 1.0) / total);
  }
  return nats / static_cast<double>(evaluate.size());
}

// A file's bytes, split into a training part (the first 1 - validation_fraction) and a
// validation part (the rest).
class ByteDataset {
 public:
  // NOT_FOUND if the file cannot be read; INVALID_ARGUMENT if it is shorter than `min_bytes`
  // or validation_fraction is outside [0, 1).
  ByteDataset(const std::string& path, size_t min_bytes, double validation_fraction = 0.1)
      : ByteDataset(read_file(path), path, min_bytes, validation_fraction) {}

  // The same, over bytes already in memory; `name` stands for the path in messages.
  static ByteDataset from_bytes(std::vector<uint8_t> bytes, size_t min_bytes, double validation_fraction = 0.1,
                                const std::string& name = "<memory>") {
    return ByteDataset(std::move(bytes), name, min_bytes, validation_fraction);
  }

  const std::string& path() const { return path_; }
  size_t size() const { return bytes_.size(); }
  std::span<const uint8_t> bytes() const { return bytes_; }
  std::span<const uint8_t> train() const { return std::span<const uint8_t>(bytes_).first(train_size_); }
  std::span<const uint8_t> validation() const { return std::span<const uint8_t>(bytes_).subspan(train_size_); }
  std::span<const uint8_t> split(Split which) const { return which == Split::kTrain ? train() : validation(); }

  std::vector<double> byte_frequencies(Split which) const { return catalyst::byte_frequencies(split(which)); }
  // Cross-entropy of the training split's smoothed unigram distribution on `evaluated_on`.
  double unigram_entropy_nats(Split evaluated_on = Split::kValidation) const {
    return unigram_cross_entropy_nats(train(), split(evaluated_on));
  }

 private:
  ByteDataset(std::vector<uint8_t> bytes, const std::string& path, size_t min_bytes, double validation_fraction)
      : path_(path), bytes_(std::move(bytes)) {
    if (!(validation_fraction >= 0.0 && validation_fraction < 1.0)) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT, "ByteDataset: " + path + ": validation_fraction " +
                                                   std::to_string(validation_fraction) + " is outside [0, 1)");
    }
    if (bytes_.size() < min_bytes) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT, "ByteDataset: " + path + " has " + std::to_string(bytes_.size()) +
                                                   " bytes, fewer than the " + std::to_string(min_bytes) + " needed");
    }
    const auto validation_size =
        static_cast<size_t>(std::llround(static_cast<double>(bytes_.size()) * validation_fraction));
    train_size_ = bytes_.size() - std::min(validation_size, bytes_.size());
  }

  static std::vector<uint8_t> read_file(const std::string& path) {
    auto fail = [&](int error) {
      return Error(CTL_STATUS_NOT_FOUND, "ByteDataset: cannot read " + path + ": " + std::strerror(error));
    };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw fail(errno);
    std::vector<uint8_t> bytes;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) bytes.reserve(static_cast<size_t>(st.st_size));
    uint8_t chunk[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int error = errno;
        ::close(fd);
        throw fail(error);
      }
      if (n == 0) break;
      bytes.insert(bytes.end(), chunk, chunk + n);
    }
    ::close(fd);
    return bytes;
  }

  std::string path_;
  std::vector<uint8_t> bytes_;
  size_t train_size_ = 0;
};

// Random windows of context + 1 bytes from one split: inputs are the first `context` bytes,
// targets the `context` bytes after each input. The bytes are borrowed: the dataset must
// outlive the sampler.
class WindowSampler {
 public:
  WindowSampler(std::span<const uint8_t> bytes, uint64_t seed) : bytes_(bytes), state_(seed) {}
  WindowSampler(const ByteDataset& dataset, Split split, uint64_t seed) : WindowSampler(dataset.split(split), seed) {}

  // Everything the sampler remembers between batches.
  uint64_t state() const { return state_; }
  void set_state(uint64_t state) { state_ = state; }

  uint64_t next_u64() { return splitmix64(state_); }
  // Uniform in [0, n), n > 0, without modulo bias: draws below 2^64 mod n are redrawn.
  uint64_t next_below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;
    for (;;) {
      const uint64_t r = next_u64();
      if (r >= threshold) return r % n;
    }
  }

  // Fills inputs and targets with batch * context token ids (row b holds window b).
  void next_batch(int64_t batch, int64_t context, std::vector<int32_t>* inputs, std::vector<int32_t>* targets) {
    if (batch <= 0 || context <= 0) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT, "WindowSampler::next_batch: batch " + std::to_string(batch) +
                                                   " and context " + std::to_string(context) + " must be positive");
    }
    if (!inputs || !targets) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT, "WindowSampler::next_batch: inputs and targets must not be null");
    }
    if (batch > INT64_MAX / context) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT, "WindowSampler::next_batch: batch * context overflows");
    }
    const auto window = static_cast<uint64_t>(context) + 1;
    if (bytes_.size() < window) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT,
                  "WindowSampler::next_batch: a window of context + 1 = " + std::to_string(window) +
                      " bytes does not fit in " + std::to_string(bytes_.size()) + " bytes of data");
    }
    const auto count = static_cast<size_t>(batch * context);
    inputs->resize(count);
    targets->resize(count);
    const uint64_t starts = bytes_.size() - window + 1;
    for (int64_t b = 0; b < batch; ++b) {
      const uint8_t* w = bytes_.data() + next_below(starts);
      int32_t* in = inputs->data() + b * context;
      int32_t* out = targets->data() + b * context;
      for (int64_t t = 0; t < context; ++t) {
        in[t] = w[t];
        out[t] = w[t + 1];
      }
    }
  }

 private:
  std::span<const uint8_t> bytes_;
  uint64_t state_;
};

}  // namespace catalyst
