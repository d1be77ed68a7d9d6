// catalog.cpp — see catalog.h.
#include "catalog.h"

namespace catalyst::conformance {

void Catalog::add_named(ctl_op_id op, const std::vector<ctl_dtype>& dtypes, const std::string& name, std::string label,
                        Body body, Level at_least) {
  const std::string op_text = ctl_op_name(op);
  const std::string dtype_text = ctl_dtype_name(dtypes.front());
  const std::string key = op_text + "." + dtype_text;
  Case c;
  c.id = key + "." + (name.empty() ? std::to_string(counters_[key]++) : name);
  c.group = op_text;
  c.op = op_text;
  c.dtype = dtype_text;
  c.level = required_level_;
  for (ctl_dtype d : dtypes) {
    if (!is_required_dtype(d)) c.level = Level::kFull;
  }
  if (at_least > c.level) c.level = at_least;
  c.label = std::move(label);
  c.run = [body = std::move(body)](CaseContext& ctx) {
    Harness h(ctx);
    body(h);
  };
  out_.push_back(std::move(c));
}

std::string shape_label(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

const char* layout_word(Layout l) {
  switch (l) {
    case Layout::kContiguous:
      return "contiguous";
    case Layout::kPermuted:
      return "permuted";
    case Layout::kSliced:
      return "sliced";
    case Layout::kExpanded:
      return "expanded";
    case Layout::kRandom:
      return "random view";
  }
  return "?";
}

const char* output_word(OutputLayout l) {
  switch (l) {
    case OutputLayout::kContiguous:
      return "contiguous output";
    case OutputLayout::kTransposed:
      return "transposed output";
    case OutputLayout::kGapped:
      return "gapped output";
  }
  return "?";
}

std::string shaped_label(const std::vector<Shaped>& s) {
  std::string out;
  for (size_t k = 0; k < s.size(); ++k) {
    out += (k ? " & " : "") + shape_label(s[k].shape) + " " + layout_word(s[k].layout);
  }
  return out;
}

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

Tolerance sum_tolerance(double n, std::vector<double> scale) {
  Tolerance t(Tol::kSum);
  t.n = n;
  t.scale = std::move(scale);
  return t;
}

}  // namespace catalyst::conformance
