// attrs.cpp — the generic op call's keyword arguments become the op's attribute struct.
// The op's family picks the struct (catalyst.h lists which op takes which); a keyword the
// struct has no field for is a TypeError, as for any Python function. No keywords at all
// means NULL attrs: the op's defaults, or the ABI's error where it needs some.
#include <pybind11/stl.h>

#include <cstring>
#include <set>
#include <string>

#include "binding.h"

namespace catalyst_py {
namespace {

class Keywords {
 public:
  Keywords(const py::dict& kwargs, ctl_op_id op) : kwargs_(kwargs), op_(op) {}
  bool has(const char* key) {
    if (!kwargs_.contains(key)) return false;
    used_.insert(key);
    return true;
  }
  template <typename T>
  T get(const char* key, T fallback) {
    return has(key) ? kwargs_[key].cast<T>() : fallback;
  }
  py::handle raw(const char* key) { return kwargs_[key]; }
  // A TypeError naming the first keyword nothing read.
  void check_all_used() const {
    for (auto item : kwargs_) {
      const std::string key = py::str(item.first);
      if (!used_.count(key)) {
        const char* name = ctl_op_name(op_);
        throw py::type_error("op '" + std::string(name ? name : "?") + "' has no attribute '" + key + "'");
      }
    }
  }

 private:
  const py::dict& kwargs_;
  ctl_op_id op_;
  std::set<std::string> used_;
};

// An int or a pair of ints, for the (height, width) fields of conv and pool attrs.
void pair_into(Keywords& k, const char* key, int64_t* out, int64_t fallback) {
  out[0] = out[1] = fallback;
  if (!k.has(key)) return;
  py::handle v = k.raw(key);
  if (py::isinstance<py::int_>(v)) {
    out[0] = out[1] = v.cast<int64_t>();
  } else {
    auto pair = v.cast<std::vector<int64_t>>();
    if (pair.size() != 2) throw py::type_error(std::string(key) + " must be an int or a pair of ints");
    out[0] = pair[0];
    out[1] = pair[1];
  }
}

ctl_activation activation_from(py::handle v) {
  if (py::isinstance<py::int_>(v)) return static_cast<ctl_activation>(v.cast<int>());
  const std::string name = v.is_none() ? "none" : v.cast<std::string>();
  if (name == "none") return CTL_ACTIVATION_NONE;
  if (name == "relu") return CTL_ACTIVATION_RELU;
  if (name == "gelu") return CTL_ACTIVATION_GELU;
  if (name == "gelu_tanh") return CTL_ACTIVATION_GELU_TANH;
  throw py::value_error("activation must be 'none', 'relu', 'gelu' or 'gelu_tanh', not '" + name + "'");
}

ctl_reduction reduction_from(py::handle v) {
  if (py::isinstance<py::int_>(v)) return static_cast<ctl_reduction>(v.cast<int>());
  const std::string name = v.cast<std::string>();
  if (name == "mean") return CTL_REDUCTION_MEAN;
  if (name == "sum") return CTL_REDUCTION_SUM;
  if (name == "none") return CTL_REDUCTION_NONE;
  throw py::value_error("reduction must be 'mean', 'sum' or 'none', not '" + name + "'");
}

template <typename T>
T* zeroed(AttrStorage& storage, size_t struct_size) {
  static_assert(sizeof(T) <= sizeof(storage.bytes));
  std::memset(storage.bytes, 0, sizeof storage.bytes);
  T* attrs = reinterpret_cast<T*>(storage.bytes);
  attrs->struct_size = struct_size;
  return attrs;
}

}  // namespace

ctl_op_id op_from(const py::handle& name_or_id) {
  if (py::isinstance<py::int_>(name_or_id)) return static_cast<ctl_op_id>(name_or_id.cast<int>());
  const std::string name = name_or_id.cast<std::string>();
  // Op ids are small and sparse: ask the ABI for every name once.
  static std::vector<std::pair<std::string, int>> table = [] {
    std::vector<std::pair<std::string, int>> t;
    for (int id = 0; id < 1024; ++id) {
      if (const char* n = ctl_op_name(static_cast<ctl_op_id>(id))) t.emplace_back(n, id);
    }
    return t;
  }();
  for (const auto& [n, id] : table) {
    if (n == name) return static_cast<ctl_op_id>(id);
  }
  throw py::value_error("no op named '" + name + "'");
}

const void* build_attrs(ctl_op_id op, const py::dict& kwargs, AttrStorage& storage) {
  if (kwargs.empty()) return nullptr;
  Keywords k(kwargs, op);
  const void* result = nullptr;
  switch (op) {
    case CTL_OP_SUM:
    case CTL_OP_MEAN:
    case CTL_OP_MAX:
    case CTL_OP_MIN:
    case CTL_OP_ARGMAX:
    case CTL_OP_ARGMIN:
    case CTL_OP_LOGSUMEXP: {
      auto* a = zeroed<ctl_reduce_attrs>(storage, CTL_REDUCE_ATTRS_STRUCT_SIZE);
      if (k.has("axis") && !k.raw("axis").is_none()) {
        py::handle axis = k.raw("axis");
        std::vector<int64_t> axes = py::isinstance<py::int_>(axis) ? std::vector<int64_t>{axis.cast<int64_t>()}
                                                                   : axis.cast<std::vector<int64_t>>();
        if (axes.size() > CTL_MAX_RANK) throw py::value_error("at most 8 axes");
        a->axis_count = static_cast<uint32_t>(axes.size());
        for (size_t i = 0; i < axes.size(); ++i) a->axes[i] = static_cast<int32_t>(axes[i]);
      }
      a->keepdims = k.get<bool>("keepdims", false);
      result = a;
      break;
    }
    case CTL_OP_MATMUL: {
      auto* a = zeroed<ctl_matmul_attrs>(storage, CTL_MATMUL_ATTRS_STRUCT_SIZE);
      a->transpose_a = k.get<bool>("transpose_a", false);
      a->transpose_b = k.get<bool>("transpose_b", false);
      a->alpha = k.get<double>("alpha", 1.0);
      a->alpha_set = true;
      a->beta = k.get<double>("beta", 0.0);
      if (k.has("activation")) a->activation = activation_from(k.raw("activation"));
      result = a;
      break;
    }
    case CTL_OP_SOFTMAX:
    case CTL_OP_LOG_SOFTMAX:
    case CTL_OP_SOFTMAX_BACKWARD:
    case CTL_OP_LOG_SOFTMAX_BACKWARD:
    case CTL_OP_CONCAT:
    case CTL_OP_GATHER:
    case CTL_OP_SCATTER_ADD: {
      auto* a = zeroed<ctl_axis_attrs>(storage, CTL_AXIS_ATTRS_STRUCT_SIZE);
      a->axis = k.get<int32_t>("axis", -1);
      result = a;
      break;
    }
    case CTL_OP_LAYER_NORM:
    case CTL_OP_RMS_NORM:
    case CTL_OP_LAYER_NORM_BACKWARD:
    case CTL_OP_RMS_NORM_BACKWARD: {
      auto* a = zeroed<ctl_norm_attrs>(storage, CTL_NORM_ATTRS_STRUCT_SIZE);
      a->epsilon = k.get<double>("eps", 1e-5);
      result = a;
      break;
    }
    case CTL_OP_CAST: {
      auto* a = zeroed<ctl_cast_attrs>(storage, CTL_CAST_ATTRS_STRUCT_SIZE);
      if (k.has("dtype")) a->dtype = dtype_from(k.raw("dtype"));
      result = a;
      break;
    }
    case CTL_OP_FILL: {
      auto* a = zeroed<ctl_fill_attrs>(storage, CTL_FILL_ATTRS_STRUCT_SIZE);
      a->value = k.get<double>("value", 0.0);
      result = a;
      break;
    }
    case CTL_OP_ARANGE: {
      auto* a = zeroed<ctl_arange_attrs>(storage, CTL_ARANGE_ATTRS_STRUCT_SIZE);
      a->start = k.get<double>("start", 0.0);
      a->step = k.get<double>("step", 1.0);
      result = a;
      break;
    }
    case CTL_OP_RANDOM_UNIFORM:
    case CTL_OP_RANDOM_NORMAL: {
      auto* a = zeroed<ctl_random_attrs>(storage, CTL_RANDOM_ATTRS_STRUCT_SIZE);
      a->seed = k.get<uint64_t>("seed", 0);
      a->offset = k.get<uint64_t>("offset", 0);
      const bool normal = op == CTL_OP_RANDOM_NORMAL;
      a->a = k.get<double>(normal ? "mean" : "low", normal ? 0.0 : 0.0);
      a->b = k.get<double>(normal ? "std" : "high", 1.0);
      result = a;
      break;
    }
    case CTL_OP_CROSS_ENTROPY:
    case CTL_OP_CROSS_ENTROPY_BACKWARD: {
      auto* a = zeroed<ctl_cross_entropy_attrs>(storage, CTL_CROSS_ENTROPY_ATTRS_STRUCT_SIZE);
      if (k.has("reduction")) a->reduction = reduction_from(k.raw("reduction"));
      if (k.has("ignore_index") && !k.raw("ignore_index").is_none()) {
        a->ignore_index = k.raw("ignore_index").cast<int64_t>();
        a->ignore_index_set = true;
      }
      result = a;
      break;
    }
    case CTL_OP_ADAMW_STEP: {
      auto* a = zeroed<ctl_adamw_attrs>(storage, CTL_ADAMW_ATTRS_STRUCT_SIZE);
      a->lr = k.get<double>("lr", 1e-3);
      a->beta1 = k.get<double>("beta1", 0.9);
      a->beta2 = k.get<double>("beta2", 0.999);
      a->eps = k.get<double>("eps", 1e-8);
      a->weight_decay = k.get<double>("weight_decay", 0.01);
      a->step = k.get<uint64_t>("step", 0);
      result = a;
      break;
    }
    case CTL_OP_SGD_STEP: {
      auto* a = zeroed<ctl_sgd_attrs>(storage, CTL_SGD_ATTRS_STRUCT_SIZE);
      a->lr = k.get<double>("lr", 1e-3);
      a->momentum = k.get<double>("momentum", 0.0);
      a->dampening = k.get<double>("dampening", 0.0);
      a->weight_decay = k.get<double>("weight_decay", 0.0);
      a->nesterov = k.get<bool>("nesterov", false);
      result = a;
      break;
    }
    case CTL_OP_CONV2D:
    case CTL_OP_CONV2D_BACKWARD_INPUT:
    case CTL_OP_CONV2D_BACKWARD_WEIGHT: {
      auto* a = zeroed<ctl_conv2d_attrs>(storage, CTL_CONV2D_ATTRS_STRUCT_SIZE);
      pair_into(k, "stride", a->stride, 1);
      pair_into(k, "padding", a->padding, 0);
      pair_into(k, "dilation", a->dilation, 1);
      a->groups = k.get<int64_t>("groups", 1);
      result = a;
      break;
    }
    case CTL_OP_MAX_POOL2D:
    case CTL_OP_MAX_POOL2D_BACKWARD:
    case CTL_OP_AVG_POOL2D:
    case CTL_OP_AVG_POOL2D_BACKWARD: {
      auto* a = zeroed<ctl_pool2d_attrs>(storage, CTL_POOL2D_ATTRS_STRUCT_SIZE);
      pair_into(k, "kernel", a->kernel, 1);
      pair_into(k, "stride", a->stride, 0);
      pair_into(k, "padding", a->padding, 0);
      a->exclude_padding = k.get<bool>("exclude_padding", false);
      result = a;
      break;
    }
    case CTL_OP_FUSED_ELEMENTWISE: {
      // program=[(op, a), (op, a, b), ...]: each op a name or id, a and b register numbers.
      auto* a = zeroed<ctl_fused_elementwise_attrs>(storage, CTL_FUSED_ELEMENTWISE_ATTRS_STRUCT_SIZE);
      if (k.has("program")) {
        const auto program = k.raw("program").cast<py::sequence>();
        // Past the array's room the count alone goes to the ABI, which names the limit.
        a->instruction_count = static_cast<uint32_t>(program.size());
        for (size_t i = 0; i < program.size() && i < CTL_FUSED_MAX_INSTRUCTIONS; ++i) {
          const auto step = program[i].cast<py::sequence>();
          if (step.size() < 2 || step.size() > 3) {
            throw py::type_error("program[" + std::to_string(i) + "] must be (op, a) or (op, a, b)");
          }
          a->program[i].op = op_from(step[0]);
          a->program[i].a = step[1].cast<uint16_t>();
          a->program[i].b = step.size() == 3 ? step[2].cast<uint16_t>() : 0;
        }
      }
      result = a;
      break;
    }
    default:
      break;  // an op without attributes: any keyword is reported below
  }
  k.check_all_used();
  return result;
}

}  // namespace catalyst_py
