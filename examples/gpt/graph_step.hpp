// graph_step.hpp — `catalyst train-gpt --graph`: the training step as two captured graphs
// (catalyst.h, "Graphs") instead of a few hundred eager op calls.
//
//  - The step graph: forward and backward of every micro-batch, on input tensors that stay
//    put (each step copies its batch into them). It writes the parameters' gradients and
//    the losses.
//  - The clip is split: the step graph also computes each gradient's squared norm (on the
//    device, as optim::grad_squares does eagerly); the host then reads them once, adds them
//    in parameter order as eager runs do, and scales the gradients when the norm is too
//    large (optim::clip_with_squares). A graph cannot read on the host.
//  - The update graph: one adamw_step per parameter; each step sets its nodes' learning
//    rate and step count (ctl_graph_set_node_attrs) and launches it.
//
// Both are captured on the first step and optimised with the default passes (or
// CATALYST_GRAPH_PASSES). Gradients are never released between steps: the step graph
// overwrites them. With --dump-graph DIR the graphs are written before and after the
// passes as DOT and SVG, with what each pass did in DIR/passes.txt.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "catalyst/graph.hpp"
#include "catalyst/nn.hpp"
#include "catalyst/optim.hpp"

namespace catalyst::gpt {

struct GraphStepOptions {
  int64_t rows = 0;  // per micro-batch
  int64_t context = 0;
  int64_t micro_batches = 1;
  double loss_factor = 1.0;  // what backward starts from: 1 / micro_batches
  std::string dump_dir;      // empty: no dump
};

class GraphStep {
 public:
  GraphStep(Runtime runtime, Device device, nn::GPT& model, optim::AdamW& optimizer, nn::NamedTensors params,
            GraphStepOptions options)
      : runtime_(std::move(runtime)),
        model_(model),
        optimizer_(optimizer),
        params_(std::move(params)),
        o_(std::move(options)) {
    for (int64_t m = 0; m < o_.micro_batches; ++m) {
      inputs_.push_back(Tensor::zeros(device, CTL_DTYPE_I32, {o_.rows, o_.context}));
      targets_.push_back(Tensor::zeros(device, CTL_DTYPE_I32, {o_.rows, o_.context}));
    }
  }

  // Copies the batch in, runs forward and backward; returns the mean loss.
  double forward_backward(const std::vector<int32_t>& x, const std::vector<int32_t>& y) {
    const size_t piece = size_t(o_.rows * o_.context);
    for (int64_t m = 0; m < o_.micro_batches; ++m) {
      const std::vector<int32_t> xm(x.begin() + m * piece, x.begin() + (m + 1) * piece);
      const std::vector<int32_t> ym(y.begin() + m * piece, y.begin() + (m + 1) * piece);
      copy_(inputs_[m], Tensor::from_vector<int32_t>(inputs_[m].device(), {o_.rows, o_.context}, xm));
      copy_(targets_[m], Tensor::from_vector<int32_t>(targets_[m].device(), {o_.rows, o_.context}, ym));
    }
    if (!step_) capture();
    step_.launch();
    double value = 0;
    for (const Tensor& loss : losses_) value += loss.item() / double(o_.micro_batches);
    return value;
  }

  // Clips the gradients to `max_norm` by their global norm (0: no clip); returns the norm.
  double clip(double max_norm) { return optim::clip_with_squares(runtime_, squares_, max_norm); }

  // One AdamW update at `lr`: the optimizer's step count advances as its step() would.
  void update(double lr) {
    const int64_t step = optimizer_.steps() + 1;
    for (const auto& [index, node] : update_nodes_) {
      const ctl_adamw_attrs a = optimizer_.attrs(index, lr, step);
      update_.set_node_attrs(node, &a);
    }
    update_.launch();
    optimizer_.set_steps(step);
  }

  // "step graph 812 -> 431 nodes (...), update graph 38 nodes": for the run's header.
  std::string summary() const {
    const ctl_graph_stats s = step_.stats(), u = update_.stats();
    char text[256];
    std::snprintf(text, sizeof text,
                  "step graph %llu -> %llu nodes, %.1f -> %.1f MiB of intermediates, %llu fusions unclaimed; "
                  "update graph %llu nodes",
                  static_cast<unsigned long long>(s.captured_nodes), static_cast<unsigned long long>(s.nodes),
                  double(s.captured_device_bytes) / 1048576.0, double(s.device_bytes) / 1048576.0,
                  static_cast<unsigned long long>(s.unfused_nodes), static_cast<unsigned long long>(u.nodes));
    return text;
  }
  const Graph& step_graph() const { return step_; }
  const Graph& update_graph() const { return update_; }

 private:
  void capture() {
    optimizer_.zero_grad();  // the graph writes fresh gradients; nothing to accumulate into
    step_ = Graph::capture(runtime_, [&] {
      for (int64_t m = 0; m < o_.micro_batches; ++m) {
        Tensor loss = model_.loss(inputs_[m], targets_[m]);
        if (o_.loss_factor == 1.0) {
          loss.backward();
        } else {
          (loss * o_.loss_factor).backward();
        }
        losses_.push_back(loss.detach());  // the record of the forward pass goes with `loss`
      }
      squares_ = optim::grad_squares(runtime_, params_);
    });
    model_.new_step();  // cast weights cached during the capture belong to the graph now
    step_.optimize();
    // The update reads the gradients the step graph made. It is captured at lr 0, and
    // update() sets each step's lr and step count before every launch.
    const int64_t steps = optimizer_.steps();
    update_ = Graph::capture(runtime_, [&] {
      uint64_t node = Graph::next_node(runtime_);
      optimizer_.step(runtime_, 0.0);
      for (size_t i = 0; i < optimizer_.size(); ++i) {
        if (optimizer_.has_grad(i)) update_nodes_.emplace_back(i, node++);
      }
    });
    optimizer_.set_steps(steps);
    if (update_.stats().captured_nodes != update_nodes_.size()) {
      throw Error(CTL_STATUS_INTERNAL, "the optimizer step captured " + std::to_string(update_.stats().captured_nodes) +
                                           " nodes, not one per "
                                           "parameter with a gradient (" +
                                           std::to_string(update_nodes_.size()) + ")");
    }
    update_.optimize();
    if (!o_.dump_dir.empty()) dump();
  }

  void dump() const {
    std::ofstream report(o_.dump_dir + "/passes.txt");
    for (const auto& [name, graph] : {std::pair<const char*, const Graph*>{"step", &step_}, {"update", &update_}}) {
      const std::string base = o_.dump_dir + "/" + name;
      graph->write_dot(CTL_GRAPH_CAPTURED, base + "_captured.dot");
      graph->write_dot(CTL_GRAPH_CURRENT, base + "_optimized.dot");
      report << name << " graph: " << graph->stats().captured_nodes << " nodes captured\n";
      for (const ctl_graph_pass_record& r : graph->passes()) {
        report << "  " << r.name << ": " << r.nodes_before << " -> " << r.nodes_after << " nodes (" << r.changes
               << " changes), " << r.device_bytes_before << " -> " << r.device_bytes_after << " bytes\n";
      }
      for (const char* stage : {"_captured", "_optimized"}) {
        const std::string command = "dot -Tsvg '" + base + stage + ".dot' -o '" + base + stage + ".svg'";
        if (std::system(command.c_str()) != 0) {
          std::fprintf(stderr, "warning: '%s' failed; is Graphviz installed (Debian's graphviz)?\n", command.c_str());
        }
      }
    }
  }

  Runtime runtime_;
  nn::GPT& model_;
  optim::AdamW& optimizer_;
  nn::NamedTensors params_;
  GraphStepOptions o_;
  optim::GradSquares squares_;
  std::vector<Tensor> inputs_, targets_, losses_;
  Graph step_, update_;
  std::vector<std::pair<size_t, uint64_t>> update_nodes_;  // (parameter index, node id)
};

}  // namespace catalyst::gpt
