// bench_args.hpp — the problem sizes every kernel benchmark binary (Catalyst's and the
// peers') takes on its command line, so that the comparison script can ask each of them
// for the same problems and a smoke test can ask for small ones.
//
// Google Benchmark's own flags (--benchmark_*) are read first by benchmark::Initialize;
// what is left is read here:
//   --sizes 128,256,...        N of the f32 N x N by N x N products
//   --lowp-sizes 1024,2048     N of the f16 and bf16 products
//   --add-elements 67108864    elements of each operand of the elementwise add
//   --norm-rows 4096 --norm-cols 4096   shape of the softmax and layer_norm input
//   --threads 1,2              thread counts of the FMA peak and the STREAM triad
//                              (catalyst-bench-machine only)
#pragma once

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace catalyst::bench {

struct Args {
  std::vector<int64_t> sizes{128, 256, 512, 1024, 2048, 4096};
  std::vector<int64_t> lowp_sizes{1024, 2048};
  int64_t add_elements = int64_t{64} << 20;
  int64_t norm_rows = 4096;
  int64_t norm_cols = 4096;
  std::vector<int64_t> threads{1, 2};
};

// "128,256" -> {128, 256}; false for anything that is not a list of positive integers.
inline bool parse_list(const std::string& text, std::vector<int64_t>* out) {
  out->clear();
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, ',');) {
    try {
      size_t used = 0;
      const long long value = std::stoll(part, &used);
      if (used != part.size() || value < 1) return false;
      out->push_back(value);
    } catch (const std::exception&) {
      return false;
    }
  }
  return !out->empty();
}

// Reads argv[1..argc) (what benchmark::Initialize left). On a bad argument it prints why
// and the usage to stderr and returns false.
inline bool parse_args(int argc, char** argv, Args* args) {
  for (int i = 1; i < argc; i += 2) {  // every argument takes a value
    const std::string name = argv[i];
    const bool has_value = i + 1 < argc;
    const std::string value = has_value ? argv[i + 1] : "";
    std::vector<int64_t> list;
    bool ok = has_value && parse_list(value, &list);
    if (ok && name == "--sizes") {
      args->sizes = list;
    } else if (ok && name == "--lowp-sizes") {
      args->lowp_sizes = list;
    } else if (ok && name == "--threads") {
      args->threads = list;
    } else if (ok && list.size() == 1 && name == "--add-elements") {
      args->add_elements = list[0];
    } else if (ok && list.size() == 1 && name == "--norm-rows") {
      args->norm_rows = list[0];
    } else if (ok && list.size() == 1 && name == "--norm-cols") {
      args->norm_cols = list[0];
    } else {
      std::fprintf(stderr,
                   "%s: bad argument '%s'%s\nusage: %s [--benchmark_* flags] [--sizes N,...] [--lowp-sizes N,...] "
                   "[--add-elements N] [--norm-rows R] [--norm-cols C] [--threads T,...]\n",
                   argv[0], name.c_str(), has_value ? (" " + value).c_str() : "", argv[0]);
      return false;
    }
  }
  return true;
}

}  // namespace catalyst::bench
