// flags.hpp — a small command-line reader for the example programs: each "--name value"
// option is bound to a variable, so a program lists its options as a table instead of
// writing the parsing loop again.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace catalyst::examples {

// `text` read by `parse` (a std::sto* function), which must use all of it: "12abc" is not 12.
template <typename Parse>
auto parse_whole(const std::string& text, Parse parse) {
  size_t used = 0;
  auto value = parse(text, &used);
  if (used != text.size()) throw std::invalid_argument("trailing characters");
  return value;
}

class Flags {
 public:
  void add(const std::string& name, int64_t* target) {
    setters_[name] = [target](const std::string& v) {
      *target = parse_whole(v, [](const std::string& s, size_t* n) { return std::stoll(s, n); });
    };
  }
  void add(const std::string& name, uint64_t* target) {
    setters_[name] = [target](const std::string& v) {
      if (!v.empty() && v[0] == '-') throw std::invalid_argument("negative");
      *target = parse_whole(v, [](const std::string& s, size_t* n) { return std::stoull(s, n); });
    };
  }
  // An option that may be absent: *target stays empty unless it is given.
  void add(const std::string& name, std::optional<int64_t>* target) {
    setters_[name] = [target](const std::string& v) {
      *target = parse_whole(v, [](const std::string& s, size_t* n) { return std::stoll(s, n); });
    };
  }
  void add(const std::string& name, double* target) {
    setters_[name] = [target](const std::string& v) {
      *target = parse_whole(v, [](const std::string& s, size_t* n) { return std::stod(s, n); });
    };
  }
  void add(const std::string& name, std::string* target) {
    setters_[name] = [target](const std::string& v) { *target = v; };
  }
  // An option without a value.
  void add_switch(const std::string& name, bool* target) { switches_[name] = target; }

  // Reads argv[first..argc). Arguments that are not options go to *positional. False, with
  // *error in words, for an unknown option, a missing value or a value that is not a number.
  bool parse(int argc, char** argv, int first, std::vector<std::string>* positional, std::string* error) const {
    for (int i = first; i < argc; ++i) {
      const std::string a = argv[i];
      if (auto s = switches_.find(a); s != switches_.end()) {
        *s->second = true;
        continue;
      }
      auto it = setters_.find(a);
      if (it == setters_.end()) {
        if (a.rfind("--", 0) == 0 || !positional) {
          *error = "unknown option '" + a + "'";
          return false;
        }
        positional->push_back(a);
        continue;
      }
      if (i + 1 >= argc) {
        *error = a + " needs a value";
        return false;
      }
      const std::string value = argv[++i];
      try {
        it->second(value);
      } catch (const std::exception&) {
        *error = "bad value '" + value + "' for " + a;
        return false;
      }
    }
    return true;
  }

 private:
  std::map<std::string, std::function<void(const std::string&)>> setters_;
  std::map<std::string, bool*> switches_;
};

}  // namespace catalyst::examples
