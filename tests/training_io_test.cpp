// training_io_test.cpp — the trainer's input and output, on the CPU plugin: safetensors
// checkpoints (bindings/cpp/include/catalyst/safetensors.hpp) round-trip bit for bit, follow the
// published layout, replace each other atomically and refuse every kind of damaged file; the
// byte dataset's sampler (text_data.hpp) replays exactly from a saved state, and its unigram
// baseline is right at the extremes.
#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "catalyst/catalyst.hpp"
#include "catalyst/safetensors.hpp"
#include "catalyst/text_data.hpp"

namespace {

using catalyst::Error;
using catalyst::Tensor;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}
std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<size_t>(i)] = static_cast<char>(v >> (8 * i));
  return s;
}
// A file from a header written by hand and raw data.
std::string raw_file(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}
std::vector<std::string> list_directory(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  return names;
}
template <typename T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}
std::string host_bytes(const Tensor& t) {
  std::string s(static_cast<size_t>(t.numel()) * ctl_dtype_size(t.dtype()), '\0');
  t.to_host(s.data(), s.size());
  return s;
}

// One tensor entry of a header.
struct HeaderEntry {
  std::string name, dtype;
  std::vector<uint64_t> shape, offsets;
};

// Reads a header the way the format describes it, written for this test alone and independent
// of the library's parser: objects, plain strings (no escapes), arrays of integers.
class HeaderScanner {
 public:
  explicit HeaderScanner(std::string_view text) : s_(text) {}
  std::vector<HeaderEntry> entries(std::map<std::string, std::string>* metadata) {
    std::vector<HeaderEntry> out;
    take('{');
    while (!at('}')) {
      const std::string name = string();
      take(':');
      take('{');
      if (name == "__metadata__") {
        while (!at('}')) {
          const std::string key = string();
          take(':');
          (*metadata)[key] = string();
          comma();
        }
      } else {
        HeaderEntry e{name, "", {}, {}};
        while (!at('}')) {
          const std::string field = string();
          take(':');
          if (field == "dtype") {
            e.dtype = string();
          } else if (field == "shape") {
            e.shape = integers();
          } else if (field == "data_offsets") {
            e.offsets = integers();
          } else {
            throw std::runtime_error("unexpected field " + field);
          }
          comma();
        }
        out.push_back(e);
      }
      take('}');
      comma();
    }
    take('}');
    at('}');  // skips the padding
    if (pos_ != s_.size()) throw std::runtime_error("text after the header object");
    return out;
  }

 private:
  bool at(char c) {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void take(char c) {
    if (!at(c)) throw std::runtime_error(std::string("expected '") + c + "' at byte " + std::to_string(pos_));
    ++pos_;
  }
  void comma() {
    if (at(',')) ++pos_;
  }
  std::string string() {
    take('"');
    const size_t end = s_.find('"', pos_);
    if (end == std::string_view::npos) throw std::runtime_error("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  std::vector<uint64_t> integers() {
    std::vector<uint64_t> out;
    take('[');
    while (!at(']')) {
      size_t used = 0;
      out.push_back(std::stoull(std::string(s_.substr(pos_, 20)), &used));
      pos_ += used;
      comma();
    }
    take(']');
    return out;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

class TrainingIo : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = runtime_.device("cpu");
    std::string pattern = (std::filesystem::temp_directory_path() / "training_io_test.XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr) << std::strerror(errno);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) {
      // Undo any permission changes a test made, then remove everything.
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }

  // Expects load_safetensors to refuse `bytes` with INVALID_ARGUMENT, a message naming the file
  // and containing `needle`.
  void expect_refused(const std::string& bytes, const std::string& needle) {
    const std::string path = file("bad.safetensors");
    write_bytes(path, bytes);
    try {
      catalyst::load_safetensors(path);
      ADD_FAILURE() << "loaded a bad file; expected an error containing '" << needle << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), CTL_STATUS_INVALID_ARGUMENT) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }

  catalyst::Runtime runtime_{catalyst::RuntimeOptions{{CTL_TEST_CPU_PLUGIN}, true, false}};
  catalyst::Device device_;
  std::string dir_;
};

// ---- safetensors ------------------------------------------------------------------------------

TEST_F(TrainingIo, RoundTripIsBitExact) {
  const float nan_payload = std::bit_cast<float>(0x7FC01234u);
  const std::vector<float> f32 = {1.5f, -0.0f, nan_payload, INFINITY, 1e-45f, -3.25f};
  const std::vector<int64_t> i64 = {INT64_MIN, -1, 0, INT64_MAX};
  const std::vector<uint16_t> f16 = {0x3C00, 0x8000, 0x7E01, 0x0001, 0xFBFF, 0x7C00};
  const std::vector<uint8_t> boolean = {1, 0, 0, 1, 1};
  const std::vector<double> scalar = {-2.718281828459045};
  const std::vector<int32_t> i32 = {7, -8, 9};
  const std::vector<int8_t> i8 = {-128, 127};
  const std::vector<uint8_t> u8 = {0, 255, 17};

  std::vector<std::pair<std::string, Tensor>> tensors = {
      {"layer.0.weight", Tensor::from_vector<float>(device_, {2, 3}, f32)},
      {"step_ids", Tensor::from_vector<int64_t>(device_, {4}, i64)},
      {"mask", Tensor::from_host(device_, CTL_DTYPE_BOOL, {5, 1}, boolean.data(), boolean.size())},
      {"scalar", Tensor::from_vector<double>(device_, {}, scalar)},
      {"empty", Tensor::empty(device_, CTL_DTYPE_F32, {0, 3})},
      {"i32", Tensor::from_vector<int32_t>(device_, {3}, i32)},
      {"i8", Tensor::from_vector<int8_t>(device_, {1, 2}, i8)},
      {"u8", Tensor::from_vector<uint8_t>(device_, {3, 1, 1}, u8)},
      {"name with \"quotes\", \\ and \xC3\xA9", Tensor::from_vector<int32_t>(device_, {1}, {42})},
  };
  if (device_.supports(CTL_DTYPE_F16)) {
    tensors.emplace_back("half", Tensor::from_host(device_, CTL_DTYPE_F16, {3, 2}, f16.data(), f16.size() * 2));
  }
  if (device_.supports(CTL_DTYPE_BF16)) {
    tensors.emplace_back("bhalf", Tensor::from_host(device_, CTL_DTYPE_BF16, {6}, f16.data(), f16.size() * 2));
  }
  const std::map<std::string, std::string> metadata = {
      {"format", "pt"}, {"step", "1200"}, {"note", "line1\nline2\t\"quoted\" \\ \x01 \xE2\x82\xAC"}, {"", ""}};
  const std::string path = file("model.safetensors");
  catalyst::save_safetensors(path, tensors, metadata);

  const catalyst::SafetensorsFile loaded = catalyst::load_safetensors(path);
  EXPECT_EQ(loaded.metadata, metadata);
  std::vector<std::string> names;
  for (const auto& [name, tensor] : tensors) names.push_back(name);
  EXPECT_EQ(loaded.names(), names);
  for (const auto& [name, original] : tensors) {
    SCOPED_TRACE(name);
    EXPECT_EQ(loaded.dtype(name), original.dtype());
    EXPECT_EQ(loaded.shape(name), original.shape());
    const Tensor back = loaded.tensor(name, device_);
    EXPECT_EQ(back.dtype(), original.dtype());
    EXPECT_EQ(back.shape(), original.shape());
    EXPECT_EQ(host_bytes(back), host_bytes(original));
  }
  EXPECT_EQ(loaded.shape("scalar"), catalyst::Shape{});
  EXPECT_EQ(loaded.tensor("scalar", device_).item(), scalar[0]);
  EXPECT_EQ(loaded.shape("empty"), (catalyst::Shape{0, 3}));
  EXPECT_EQ(loaded.tensor("empty", device_).numel(), 0);
}

TEST_F(TrainingIo, LayoutFollowsTheFormat) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<int64_t> b = {-1, 1 << 20};
  const std::string path = file("layout.safetensors");
  catalyst::save_safetensors(path,
                             {{"a", Tensor::from_vector<float>(device_, {2, 3}, a)},
                              {"e", Tensor::empty(device_, CTL_DTYPE_I64, {0})},
                              {"b", Tensor::from_vector<int64_t>(device_, {2}, b)},
                              {"s", Tensor::full(device_, CTL_DTYPE_U8, {}, 7)}},
                             {{"k", "v"}});
  const std::string bytes = read_bytes(path);
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(i)]);
  ASSERT_LE(n, bytes.size() - 8);
  EXPECT_EQ((8 + n) % 8, 0u) << "the data starts 8-byte aligned";
  const std::string header = bytes.substr(8, n);
  const std::string data = bytes.substr(8 + n);
  ASSERT_EQ(header.front(), '{');
  const size_t last = header.find_last_not_of(' ');
  ASSERT_NE(last, std::string::npos);
  EXPECT_EQ(header[last], '}') << "only spaces pad the header";
  EXPECT_NE(header.find("\"__metadata__\""), std::string::npos);

  // The entries, read by the test's own scanner.
  std::map<std::string, std::string> meta;
  const std::vector<HeaderEntry> found = HeaderScanner(header).entries(&meta);
  EXPECT_EQ(meta, (std::map<std::string, std::string>{{"k", "v"}}));
  ASSERT_EQ(found.size(), 4u) << header;
  EXPECT_EQ(found[0].name, "a");
  EXPECT_EQ(found[0].dtype, "F32");
  EXPECT_EQ(found[0].shape, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(found[1].name, "e");
  EXPECT_EQ(found[1].dtype, "I64");
  EXPECT_EQ(found[1].shape, (std::vector<uint64_t>{0}));
  EXPECT_EQ(found[2].name, "b");
  EXPECT_EQ(found[2].dtype, "I64");
  EXPECT_EQ(found[3].name, "s");
  EXPECT_EQ(found[3].dtype, "U8");
  EXPECT_EQ(found[3].shape, std::vector<uint64_t>{});
  // Contiguous, in order, covering the data exactly.
  uint64_t expected = 0;
  for (const HeaderEntry& f : found) {
    ASSERT_EQ(f.offsets.size(), 2u) << f.name;
    EXPECT_EQ(f.offsets[0], expected) << f.name;
    expected = f.offsets[1];
  }
  EXPECT_EQ(expected, data.size());
  EXPECT_EQ(data.substr(found[0].offsets[0], 24), bytes_of(a));
  EXPECT_EQ(data.substr(found[2].offsets[0], 16), bytes_of(b));
  EXPECT_EQ(data.substr(found[3].offsets[0]), std::string(1, '\x07'));
  // Little-endian on disk, whatever the test's host would do: 2.0f is 00 00 00 40.
  EXPECT_EQ(data.substr(4, 4), std::string("\x00\x00\x00\x40", 4));
}

TEST_F(TrainingIo, NonContiguousTensorIsSavedAsLogicalRowMajor) {
  const Tensor m = Tensor::from_vector<float>(device_, {2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor t = m.transpose(0, 1);  // a view: shape {3, 2}, strides {1, 3}
  const Tensor stepped = Tensor::from_vector<int32_t>(device_, {6}, {0, 1, 2, 3, 4, 5}).slice(0, 1, 6, 2);
  const std::string path = file("views.safetensors");
  catalyst::save_safetensors(path, {{"t", t}, {"stepped", stepped}}, {});
  const auto loaded = catalyst::load_safetensors(path);
  EXPECT_EQ(loaded.shape("t"), (catalyst::Shape{3, 2}));
  EXPECT_EQ(loaded.tensor("t", device_).to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(loaded.tensor("stepped", device_).to_vector<int32_t>(), (std::vector<int32_t>{1, 3, 5}));
}

TEST_F(TrainingIo, DamagedFilesAreRefused) {
  const std::string good_header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string data(8, '\x11');
  expect_refused("", "shorter than the 8-byte header size");
  expect_refused(std::string("\x10\x00\x00", 3), "shorter than the 8-byte header size");
  expect_refused(le64(1000) + good_header + data, "runs past the end of the file");
  expect_refused(le64(UINT64_MAX) + good_header + data, "runs past the end of the file");
  // Truncated in the data: the offsets now run past the end.
  std::string truncated = raw_file(good_header, data);
  truncated.resize(truncated.size() - 3);
  expect_refused(truncated, "past the end of the data");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})", data), "invalid JSON");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],}})", data), "invalid JSON");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}})", data), "fraction");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[02],"data_offsets":[0,8]}})", data), "leading zero");
  expect_refused(raw_file("{\"w\xff\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", data), "UTF-8");
  expect_refused(raw_file("{\"w\n\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", data),
                 "control character");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} x)", data), "after the JSON");
  expect_refused(raw_file(std::string(100, '[') + std::string(100, ']'), ""), "nested deeper");
  expect_refused(raw_file("[]", ""), "not an object");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,16]}})", data),
                 "past the end of the data");
  expect_refused(raw_file(R"({"w":{"dtype":"F8","shape":[2],"data_offsets":[0,8]}})", data), "unknown dtype \"F8\"");
  expect_refused(raw_file(R"({"w":{"dtype":"F64","shape":[2],"data_offsets":[0,8]}})", data), "hold 8 bytes");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", data), "not a size");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", data),
                 "too large");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", data), "end before begin");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[2]}})", data), "lacks the field \"data_offsets\"");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"x":1}})", data), "unknown field");
  expect_refused(raw_file(R"({"w":[1]})", data), "not an object");
  expect_refused(raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                          R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                          data),
                 "overlap");
  expect_refused(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", data), "a gap of 4 bytes");
  expect_refused(raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", data), "cover 4 bytes");
  expect_refused(raw_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                          R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                          data),
                 "\"w\" appears twice");
  expect_refused(raw_file(R"({"__metadata__":{"step":12}})", ""), "not a string");
  expect_refused(raw_file(R"({"__metadata__":["x"]})", ""), "\"__metadata__\" is not an object");
  expect_refused(raw_file(R"({"\ud800":{"dtype":"U8","shape":[],"data_offsets":[0,1]}})", "x"), "surrogate");

  // A file someone else wrote: escapes, whitespace and padding are all fine.
  const std::string path = file("other.safetensors");
  write_bytes(path, raw_file("{ \"__metadata__\" : { \"a\\u00e9\\n\" : \"\\ud83d\\ude00\" } ,\n"
                             "  \"b\\/c\" : { \"data_offsets\" : [ 0 , 2 ] , \"shape\" : [ 2, 1 ] ,"
                             " \"dtype\" : \"BOOL\" } }        ",
                             std::string("\x01\x00", 2)));
  const auto loaded = catalyst::load_safetensors(path);
  EXPECT_EQ(loaded.metadata.at("a\xC3\xA9\n"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(loaded.tensor("b/c", device_).shape(), (catalyst::Shape{2, 1}));

  // A boolean that is neither 0 nor 1 is refused when it becomes a tensor.
  write_bytes(path, raw_file(R"({"m":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", std::string("\x01\x02", 2)));
  try {
    catalyst::load_safetensors(path).tensor("m", device_);
    ADD_FAILURE() << "a BOOL byte of 2 became a tensor";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), CTL_STATUS_INVALID_ARGUMENT) << e.what();
  }
}

// Random damage to a valid file: every outcome is a checked file or a catalyst::Error.
TEST_F(TrainingIo, RandomDamageNeverCrashes) {
  const std::string path = file("fuzz.safetensors");
  catalyst::save_safetensors(path,
                             {{"w", Tensor::from_vector<float>(device_, {2, 2}, {1, 2, 3, 4})},
                              {"b", Tensor::from_vector<int64_t>(device_, {1}, {5})},
                              {"m", Tensor::full(device_, CTL_DTYPE_BOOL, {3}, 1)}},
                             {{"step", "3"}});
  const std::string good = read_bytes(path);
  std::mt19937_64 rng(1234);
  int loaded = 0, refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = good;
    const int flips = 1 + static_cast<int>(rng() % 3);
    for (int f = 0; f < flips; ++f) {
      const size_t at = rng() % bad.size();
      switch (rng() % 3) {
        case 0:
          bad[at] = static_cast<char>(rng());
          break;
        case 1:
          bad.resize(at);
          break;
        default:
          bad[at] = "{}[],:\"0123456789 \\"[rng() % 18];
      }
      if (bad.empty()) break;
    }
    write_bytes(path, bad);
    try {
      const auto file = catalyst::load_safetensors(path);
      for (const auto& name : file.names()) {
        try {
          file.tensor(name, device_);
        } catch (const Error&) {
        }
      }
      ++loaded;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), CTL_STATUS_INVALID_ARGUMENT) << e.what();
      ++refused;
    }
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(loaded, 0);  // flips inside tensor data leave a valid file
}

TEST_F(TrainingIo, UnknownNamesAndMissingFiles) {
  const std::string path = file("names.safetensors");
  catalyst::save_safetensors(
      path,
      {{"wte", Tensor::zeros(device_, CTL_DTYPE_F32, {4, 2})}, {"wpe", Tensor::zeros(device_, CTL_DTYPE_F32, {3, 2})}},
      {});
  const auto loaded = catalyst::load_safetensors(path);
  EXPECT_TRUE(loaded.contains("wte"));
  EXPECT_FALSE(loaded.contains("lm_head"));
  try {
    loaded.tensor("lm_head", device_);
    ADD_FAILURE() << "no error for an unknown name";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), CTL_STATUS_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("lm_head"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("wte, wpe"), std::string::npos) << e.what();
  }
  try {
    catalyst::load_safetensors(file("absent.safetensors"));
    ADD_FAILURE() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), CTL_STATUS_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find(file("absent.safetensors")), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOENT)), std::string::npos) << e.what();
  }
  // Bad arguments to save are refused before any file is made.
  const Tensor x = Tensor::zeros(device_, CTL_DTYPE_F32, {1});
  EXPECT_THROW(catalyst::save_safetensors(file("dup.safetensors"), {{"x", x}, {"x", x}}, {}), Error);
  EXPECT_THROW(catalyst::save_safetensors(file("meta.safetensors"), {{"__metadata__", x}}, {}), Error);
  EXPECT_THROW(catalyst::save_safetensors(file("null.safetensors"), {{"x", Tensor()}}, {}), Error);
  EXPECT_EQ(list_directory(dir_), std::vector<std::string>{"names.safetensors"});
}

TEST_F(TrainingIo, FailedSavesLeaveNoFileAndKeepTheOldOne) {
  const Tensor x = Tensor::from_vector<float>(device_, {2}, {1, 2});
  // The directory does not exist.
  const std::string nowhere = file("no/such/dir/model.safetensors");
  try {
    catalyst::save_safetensors(nowhere, {{"x", x}}, {});
    ADD_FAILURE() << "saved into a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), CTL_STATUS_NOT_FOUND) << e.what();
    EXPECT_NE(std::string(e.what()).find(nowhere), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOENT)), std::string::npos) << e.what();
  }
  EXPECT_TRUE(list_directory(dir_).empty());

  // The rename fails (the target is a directory): the temporary file is removed.
  const std::string occupied = file("occupied.safetensors");
  ASSERT_EQ(mkdir(occupied.c_str(), 0755), 0);
  EXPECT_THROW(catalyst::save_safetensors(occupied, {{"x", x}}, {}), Error);
  EXPECT_EQ(list_directory(dir_), std::vector<std::string>{"occupied.safetensors"});

  // An old checkpoint stays intact when the new one cannot be written (here its temporary
  // path is taken by a directory).
  const std::string path = file("model.safetensors");
  catalyst::save_safetensors(path, {{"x", x}}, {{"step", "1"}});
  const std::string old_bytes = read_bytes(path);
  const std::string blocker = path + ".tmp-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(blocker.c_str(), 0755), 0);
  EXPECT_THROW(catalyst::save_safetensors(path, {{"x", Tensor::zeros(device_, CTL_DTYPE_F64, {9})}}, {}), Error);
  EXPECT_EQ(read_bytes(path), old_bytes);
  EXPECT_EQ(catalyst::load_safetensors(path).metadata.at("step"), "1");
  struct stat st {};
  EXPECT_EQ(stat(blocker.c_str(), &st), 0) << "someone else's path is left alone";
}

TEST_F(TrainingIo, SavingOverACheckpointReplacesIt) {
  const std::string path = file("ckpt.safetensors");
  catalyst::save_safetensors(path, {{"w", Tensor::from_vector<float>(device_, {3}, {1, 2, 3})}}, {{"step", "100"}});
  catalyst::save_safetensors(path, {{"w", Tensor::from_vector<float>(device_, {2}, {9, 8})}}, {{"step", "200"}});
  const auto loaded = catalyst::load_safetensors(path);
  EXPECT_EQ(loaded.metadata.at("step"), "200");
  EXPECT_EQ(loaded.tensor("w", device_).to_vector<float>(), (std::vector<float>{9, 8}));
  EXPECT_EQ(list_directory(dir_), std::vector<std::string>{"ckpt.safetensors"}) << "no .tmp files remain";
  // A relative path (the directory to sync is ".") works too.
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  catalyst::save_safetensors("relative.safetensors", {{"w", Tensor::zeros(device_, CTL_DTYPE_U8, {1})}}, {});
  std::filesystem::current_path(cwd);
  EXPECT_TRUE(catalyst::load_safetensors(file("relative.safetensors")).contains("w"));
}

// ---- byte dataset and sampler -------------------------------------------------------------------

std::vector<uint8_t> text_bytes(size_t n) {
  std::vector<uint8_t> bytes(n);
  const char* text = "the quick brown fox jumps over the lazy dog. ";
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(text[i % std::strlen(text)] + (i / 997) % 3);
  return bytes;
}

TEST_F(TrainingIo, DatasetSplitsAndReportsErrors) {
  const std::string path = file("input.txt");
  const std::vector<uint8_t> bytes = text_bytes(1000);
  write_bytes(path, std::string(bytes.begin(), bytes.end()));
  const catalyst::ByteDataset data(path, 100);
  EXPECT_EQ(data.size(), 1000u);
  EXPECT_EQ(data.train().size(), 900u);
  EXPECT_EQ(data.validation().size(), 100u);
  EXPECT_EQ(data.validation()[0], bytes[900]);
  EXPECT_EQ(data.split(catalyst::Split::kTrain).data(), data.bytes().data());
  const catalyst::ByteDataset quarter(path, 100, 0.25);
  EXPECT_EQ(quarter.train().size(), 750u);
  EXPECT_EQ(quarter.validation().size(), 250u);
  const catalyst::ByteDataset all(path, 100, 0.0);
  EXPECT_EQ(all.validation().size(), 0u);

  const auto frequencies = data.byte_frequencies(catalyst::Split::kTrain);
  ASSERT_EQ(frequencies.size(), 256u);
  double total = 0;
  for (double f : frequencies) total += f;
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_EQ(frequencies['Q'], 0.0);

  try {
    catalyst::ByteDataset(file("missing.txt"), 1);
    ADD_FAILURE() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), CTL_STATUS_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find(file("missing.txt")), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(ENOENT)), std::string::npos) << e.what();
  }
  try {
    catalyst::ByteDataset(path, 5000);
    ADD_FAILURE() << "no error for a short file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), CTL_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("1000 bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(catalyst::ByteDataset(path, 1, 1.0), Error);
  EXPECT_THROW(catalyst::ByteDataset(path, 1, -0.1), Error);
  EXPECT_THROW(catalyst::ByteDataset(path, 1, NAN), Error);
}

TEST_F(TrainingIo, SamplerReplaysFromASavedState) {
  const auto data = catalyst::ByteDataset::from_bytes(text_bytes(5000), 100);
  const int64_t batch = 4, context = 16;
  std::vector<int32_t> in1, tg1, in2, tg2;

  // The same seed, the same batches.
  catalyst::WindowSampler a(data, catalyst::Split::kTrain, 42), b(data, catalyst::Split::kTrain, 42);
  for (int i = 0; i < 3; ++i) {
    a.next_batch(batch, context, &in1, &tg1);
    b.next_batch(batch, context, &in2, &tg2);
    EXPECT_EQ(in1, in2);
    EXPECT_EQ(tg1, tg2);
  }
  catalyst::WindowSampler other(data, catalyst::Split::kTrain, 43);
  other.next_batch(batch, context, &in2, &tg2);
  a.next_batch(batch, context, &in1, &tg1);
  EXPECT_NE(in1, in2) << "another seed draws other windows";

  // Restoring a state mid-stream reproduces the uninterrupted run's next batches.
  catalyst::WindowSampler run(data, catalyst::Split::kTrain, 7);
  for (int i = 0; i < 5; ++i) run.next_batch(batch, context, &in1, &tg1);
  const uint64_t saved = run.state();
  std::vector<std::vector<int32_t>> expected;
  for (int i = 0; i < 4; ++i) {
    run.next_batch(batch, context, &in1, &tg1);
    expected.push_back(in1);
    expected.push_back(tg1);
  }
  catalyst::WindowSampler resumed(data, catalyst::Split::kTrain, 999);
  resumed.set_state(saved);
  EXPECT_EQ(resumed.state(), saved);
  for (int i = 0; i < 4; ++i) {
    resumed.next_batch(batch, context, &in2, &tg2);
    EXPECT_EQ(in2, expected[2 * i]) << "batch " << i;
    EXPECT_EQ(tg2, expected[2 * i + 1]) << "batch " << i;
  }
  EXPECT_EQ(resumed.state(), run.state());
}

TEST_F(TrainingIo, SamplerWindowsAreShiftedSlicesOfTheSplit) {
  const auto data = catalyst::ByteDataset::from_bytes(text_bytes(3000), 100);
  const auto split = data.validation();
  catalyst::WindowSampler sampler(data, catalyst::Split::kValidation, 1);
  const int64_t batch = 8, context = 32;
  std::vector<int32_t> inputs, targets;
  std::set<int32_t> seen_first;
  for (int round = 0; round < 20; ++round) {
    sampler.next_batch(batch, context, &inputs, &targets);
    ASSERT_EQ(inputs.size(), static_cast<size_t>(batch * context));
    ASSERT_EQ(targets.size(), inputs.size());
    for (int64_t b = 0; b < batch; ++b) {
      const int32_t* in = inputs.data() + b * context;
      const int32_t* tg = targets.data() + b * context;
      for (int64_t t = 0; t + 1 < context; ++t) EXPECT_EQ(tg[t], in[t + 1]);
      // The window (inputs then the last target) occurs in the split.
      std::vector<uint8_t> window(in, in + context);
      window.push_back(static_cast<uint8_t>(tg[context - 1]));
      EXPECT_NE(std::search(split.begin(), split.end(), window.begin(), window.end()), split.end());
      for (int64_t t = 0; t < context; ++t) ASSERT_TRUE(in[t] >= 0 && in[t] < 256);
    }
    seen_first.insert(inputs[0]);
  }
  EXPECT_GT(seen_first.size(), 3u) << "windows start in different places";

  // A window that exactly fits has one place to go; a larger one is an error.
  catalyst::WindowSampler tight(split.first(33), 5);
  tight.next_batch(2, 32, &inputs, &targets);
  EXPECT_EQ(inputs[0], split[0]);
  EXPECT_EQ(targets[31], split[32]);
  // With one byte to spare there are two places, and both are drawn.
  ASSERT_FALSE(std::equal(split.begin(), split.begin() + 32, split.begin() + 1));
  catalyst::WindowSampler two(split.first(34), 5);
  std::set<int32_t> starts;
  for (int i = 0; i < 64; ++i) {
    two.next_batch(1, 32, &inputs, &targets);
    const bool second = std::equal(inputs.begin(), inputs.end(), split.begin() + 1);
    EXPECT_TRUE(second || std::equal(inputs.begin(), inputs.end(), split.begin()));
    starts.insert(second ? 1 : 0);
  }
  EXPECT_EQ(starts.size(), 2u) << "the last window is never drawn";
  EXPECT_THROW(tight.next_batch(1, 33, &inputs, &targets), Error);
  EXPECT_THROW(tight.next_batch(0, 4, &inputs, &targets), Error);
  EXPECT_THROW(tight.next_batch(1, 4, nullptr, &targets), Error);
}

TEST_F(TrainingIo, UnigramBaselineAtTheExtremes) {
  // One repeated byte: almost no uncertainty (add-one smoothing leaves a little).
  const std::string same = file("same.txt");
  write_bytes(same, std::string(200000, 'a'));
  const double h_same = catalyst::ByteDataset(same, 1000).unigram_entropy_nats();
  EXPECT_GE(h_same, 0.0);
  EXPECT_LT(h_same, 0.01);

  // Uniformly random bytes: log(256) nats.
  std::mt19937_64 rng(2024);
  std::string noise(1 << 20, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  const std::string random = file("random.bin");
  write_bytes(random, noise);
  const catalyst::ByteDataset data(random, 1000);
  EXPECT_NEAR(data.unigram_entropy_nats(), std::log(256.0), 0.01);
  EXPECT_NEAR(data.unigram_entropy_nats(catalyst::Split::kTrain), std::log(256.0), 0.01);

  // A small case by hand: train "aab" -> p(a) = 3/259, p(b) = 2/259, p(c) = 1/259.
  const std::vector<uint8_t> train = {'a', 'a', 'b'}, evaluate = {'a', 'c'};
  EXPECT_NEAR(catalyst::unigram_cross_entropy_nats(train, evaluate), -(std::log(3.0 / 259) + std::log(1.0 / 259)) / 2,
              1e-12);
  EXPECT_THROW(catalyst::unigram_cross_entropy_nats(train, {}), Error);
}

}  // namespace
