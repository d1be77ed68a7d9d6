// train_gpt.cpp — `catalyst train-gpt`: trains a byte-level GPT from scratch on a text file
// (by default the fortunes of Debian's `fortunes` package) on any Catalyst device, with a
// progress bar, evaluation on a held-out split, checkpoints that resume bit-identically, a
// JSON-lines log, a loss plot and a sample of generated text at the end.
//
// Written only against the C++ binding (bindings/cpp), which uses only the C ABI.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "catalyst/catalyst.hpp"
#include "catalyst/nn.hpp"
#include "catalyst/optim.hpp"
#include "catalyst/safetensors.hpp"
#include "catalyst/text_data.hpp"
#include "checkpoint.hpp"
#include "flags.hpp"
#include "graph_step.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string data;
  std::string device;
  std::string out_dir = "gpt-run";
  bool resume = false;
  // The defaults are the README's demo: about three minutes on 2 idle cores. Measured there
  // (README, "Why this model"), a narrow, deep model trained for many steps learns most in
  // that time: 7,800 steps of width 96 and 4 layers reached 1.652 nats where 6,000 steps of
  // width 128 and 3 layers, about the same arithmetic, reached 1.671.
  int64_t steps = 7000;
  int64_t batch = 16;
  int64_t context = 64;
  int64_t width = 96;
  int64_t heads = 4;
  int64_t layers = 4;
  double lr = 3e-3;
  double min_lr = 3e-5;
  int64_t warmup = 50;
  double clip = 1.0;
  double weight_decay = 0.1;
  int64_t eval_every = 100;
  int64_t eval_batches = 8;
  int64_t checkpoint_every = 100;
  int64_t sample_length = 400;
  double temperature = 0.8;
  uint64_t seed = 1337;
  bool quiet = false;
  std::optional<int64_t> kill_after_step;  // tests: die by SIGKILL right after this step (never when empty)
  std::string devices;                     // --devices LIST (comma-separated device names)
  bool data_parallel = false;              // --data-parallel: a rank per --devices entry (data_parallel.hpp)
  std::string split;                       // --split 3,1: blocks per --devices stage (pipeline.hpp)
  int64_t micro_batches = 1;               // --micro-batches N: each step's batch in N pieces
  bool allow_fallback = false;             // --allow-fallback: ops a device lacks run on another
  std::string precision = "f32";           // --precision f32|bf16|f16: the products' dtype
  ctl_dtype compute = CTL_DTYPE_F32;       // parsed from --precision
  std::optional<int64_t> inject_overflow;  // tests: this step's loss times 1e30 (f16 must skip it)
  bool graph = false;                      // --graph / --no-graph: the step as captured graphs (graph_step.hpp)
  std::string dump_graph;                  // --dump-graph DIR: the graphs as DOT and SVG
};

void usage(FILE* out) {
  std::fprintf(
      out,
      "usage: catalyst train-gpt [options]\n"
      "\n"
      "Trains a byte-level GPT from scratch and prints a sample of generated text.\n"
      "\n"
      "data and device:\n"
      "  --data FILE           text to learn (default: every fortune in /usr/share/games/fortunes)\n"
      "  --device SPEC         cpu, cpu:1, opencl:0, an index, ... (default: the default device)\n"
      "  --out DIR             checkpoint, log.jsonl, loss.png and sample.txt (default gpt-run)\n"
      "  --resume              continue from DIR/checkpoint.safetensors (checked against these options first)\n"
      "  --data-parallel       one rank per --devices entry, each on its share of every batch; implied\n"
      "                        under mpirun (mpirun -np N catalyst train-gpt ...: a rank per process)\n"
      "  --devices LIST        devices for the ranks, e.g. cpu:0,cpu:0 (in one process each rank has a\n"
      "                        runtime of its own, so a name may repeat)\n"
      "                        without --data-parallel: a layer (pipeline) split, consecutive blocks on\n"
      "                        successive devices (in proportion to their memory), e.g. cpu:0,opencl:0\n"
      "  --split N,N,...       blocks per --devices stage (default: by memory)\n"
      "  --micro-batches N     run each step's batch in N pieces whose gradients add up (default 1)\n"
      "  --allow-fallback      run ops a device lacks on another device (counted and reported), instead of\n"
      "                        failing\n"
      "model:\n"
      "  --context N --width N --heads N --layers N   (default 64, 96, 4, 4)\n"
      "training:\n"
      "  --steps N (7000)  --batch N (16)  --lr X (3e-3)  --min-lr X (3e-5)  --warmup N (50)\n"
      "  --clip X (1.0)  --weight-decay X (0.1)  --seed N (1337)\n"
      "  --precision P         f32, bf16 or f16 (default f32): matmuls and attention's products on 16-bit\n"
      "                        copies with f32 accumulation; norms, softmax, loss and AdamW stay f32 on f32\n"
      "                        master weights. f16 scales the loss dynamically (scale and skipped steps in\n"
      "                        log.jsonl). Faster than f32 where the device multiplies 16-bit numbers much\n"
      "                        faster (AMX); about f32's speed with AVX512-BF16 alone (README)\n"
      "  --eval-every N (100)  --eval-batches N (8)  --checkpoint-every N (100)\n"
      "  --graph, --no-graph   capture the step once as graphs, optimise them (dead code, constants, repeats,\n"
      "                        fusion, memory planning; CATALYST_GRAPH_PASSES picks passes) and launch them\n"
      "                        every step (default --no-graph); one device, f32 or bf16 (docs/graphs.md)\n"
      "  --dump-graph DIR      write the captured and optimised graphs as DOT and SVG, and what each pass\n"
      "                        did (DIR/passes.txt)\n"
      "output:\n"
      "  --sample-length N (400)  --temperature X (0.8)  --quiet (no progress bar)\n"
      "testing:\n"
      "  --kill-after-step N   die by SIGKILL right after step N (and its checkpoint), to test --resume\n"
      "                        (default: never)\n"
      "  --inject-overflow-at-step N   multiply step N's loss by 1e30 before backward (f16 must skip the step)\n");
}

bool parse(int argc, char** argv, Options* o, std::string* error) {
  catalyst::examples::Flags flags;
  bool help = false;
  flags.add_switch("--help", &help);
  flags.add_switch("-h", &help);
  flags.add("--data", &o->data);
  flags.add("--device", &o->device);
  flags.add("--out", &o->out_dir);
  flags.add_switch("--resume", &o->resume);
  flags.add("--steps", &o->steps);
  flags.add("--batch", &o->batch);
  flags.add("--context", &o->context);
  flags.add("--width", &o->width);
  flags.add("--heads", &o->heads);
  flags.add("--layers", &o->layers);
  flags.add("--lr", &o->lr);
  flags.add("--min-lr", &o->min_lr);
  flags.add("--warmup", &o->warmup);
  flags.add("--clip", &o->clip);
  flags.add("--weight-decay", &o->weight_decay);
  flags.add("--eval-every", &o->eval_every);
  flags.add("--eval-batches", &o->eval_batches);
  flags.add("--checkpoint-every", &o->checkpoint_every);
  flags.add("--sample-length", &o->sample_length);
  flags.add("--temperature", &o->temperature);
  flags.add("--seed", &o->seed);
  flags.add_switch("--quiet", &o->quiet);
  flags.add("--kill-after-step", &o->kill_after_step);
  flags.add("--devices", &o->devices);
  flags.add_switch("--data-parallel", &o->data_parallel);
  flags.add("--split", &o->split);
  flags.add("--micro-batches", &o->micro_batches);
  flags.add_switch("--allow-fallback", &o->allow_fallback);
  flags.add("--precision", &o->precision);
  flags.add("--inject-overflow-at-step", &o->inject_overflow);
  bool no_graph = false;
  flags.add_switch("--graph", &o->graph);
  flags.add_switch("--no-graph", &no_graph);
  flags.add("--dump-graph", &o->dump_graph);
  if (!flags.parse(argc, argv, 0, nullptr, error)) return false;
  if (help) {
    usage(stdout);
    std::exit(0);
  }
  if (o->steps < 1 || o->batch < 1 || o->context < 2 || o->width < 1 || o->heads < 1 || o->layers < 1 ||
      o->eval_every < 1 || o->eval_batches < 1 || o->checkpoint_every < 1) {
    *error =
        "--steps, --batch, --width, --heads, --layers, --eval-every, --eval-batches and --checkpoint-every must be "
        "positive and --context at least 2";
    return false;
  }
  if (o->micro_batches < 1 || o->batch % o->micro_batches != 0) {
    *error = "--micro-batches (" + std::to_string(o->micro_batches) + ") must be positive and divide --batch (" +
             std::to_string(o->batch) + ")";
    return false;
  }
  if (o->graph && no_graph) {
    *error = "give --graph or --no-graph, not both";
    return false;
  }
  if (!o->dump_graph.empty()) o->graph = true;
  if (o->graph && (!o->devices.empty() || o->data_parallel)) {
    *error = "--graph runs on one device; it does not combine with --devices or --data-parallel yet";
    return false;
  }
  if (!o->split.empty() && (o->devices.empty() || o->data_parallel)) {
    *error = "--split needs --devices and applies to the layer split, not --data-parallel";
    return false;
  }
  if (!o->device.empty() && !o->devices.empty() && !o->data_parallel) {
    *error = "give either --device (one device) or --devices (a layer split), not both";
    return false;
  }
  if (!catalyst::nn::parse_precision(o->precision, &o->compute)) {
    *error = "--precision is '" + o->precision + "'; it must be f32, bf16 or f16";
    return false;
  }
  if (o->graph && o->compute == CTL_DTYPE_F16) {
    *error = "--graph takes --precision f32 or bf16: f16's dynamic loss scale changes every step's work";
    return false;
  }
  if (o->compute != CTL_DTYPE_F32 && (o->data_parallel || !o->devices.empty())) {
    *error = "--precision " + o->precision + " runs on one device for now (not with --devices or --data-parallel)";
    return false;
  }
  if (o->kill_after_step && *o->kill_after_step < 0) {
    *error = "--kill-after-step (" + std::to_string(*o->kill_after_step) + ") must not be negative";
    return false;
  }
  if (o->width % o->heads != 0) {
    *error =
        "--width (" + std::to_string(o->width) + ") must be a multiple of --heads (" + std::to_string(o->heads) + ")";
    return false;
  }
  return true;
}

// The fortunes package's text files (not the .dat indexes), concatenated in name order.
std::string default_corpus(std::string* error) {
  const fs::path dir = "/usr/share/games/fortunes";
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const fs::path p = entry.path();
    if (!entry.is_regular_file() || p.has_extension()) continue;  // skips *.dat and *.u8
    files.push_back(p);
  }
  if (files.empty()) {
    *error = "no --data given and no fortunes in " + dir.string() +
             " (install Debian's `fortunes` package, or pass --data FILE)";
    return "";
  }
  std::sort(files.begin(), files.end());
  const fs::path out = fs::temp_directory_path() / ("catalyst-fortunes-" + std::to_string(getuid()) + ".txt");
  // Written under a name of this process's own and renamed into place: runs that start
  // together (a benchmark beside the demo) would otherwise read each other's half-written file.
  const fs::path part = out.string() + "." + std::to_string(getpid());
  {
    std::ofstream o(part, std::ios::binary);
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      o << in.rdbuf();
    }
  }
  fs::rename(part, out);
  return out.string();
}

std::string human_time(double seconds) {
  char b[32];
  if (seconds >= 3600) {
    std::snprintf(b, sizeof b, "%dh%02dm", int(seconds / 3600), int(std::fmod(seconds, 3600) / 60));
  } else if (seconds >= 60) {
    std::snprintf(b, sizeof b, "%dm%02ds", int(seconds / 60), int(std::fmod(seconds, 60)));
  } else {
    std::snprintf(b, sizeof b, "%.0fs", seconds);
  }
  return b;
}

// Token ids as an i32 tensor [batch, context].
catalyst::Tensor ids_tensor(catalyst::Device device, int64_t batch, int64_t context, const std::vector<int32_t>& ids) {
  return catalyst::Tensor::from_vector<int32_t>(device, {batch, context}, ids);
}

// Mean validation loss over `batches` windows drawn with a fixed generator state, so every
// evaluation of a run sees the same text.
double evaluate(const catalyst::Runtime& rt, const catalyst::nn::GPT& model, const catalyst::ByteDataset& data,
                const Options& o, catalyst::Device device) {
  catalyst::NoGrad no_grad(rt);
  catalyst::WindowSampler sampler(data.validation(), 0x5eed);
  double total = 0;
  std::vector<int32_t> x, y;
  for (int64_t i = 0; i < o.eval_batches; ++i) {
    sampler.next_batch(o.batch, o.context, &x, &y);
    total += model.loss(ids_tensor(device, o.batch, o.context, x), ids_tensor(device, o.batch, o.context, y)).item();
  }
  return total / double(o.eval_batches);
}

// Mean loss per byte over the whole validation split, read once in consecutive windows of
// --context bytes (each predicting the byte after each position), --batch windows at a time.
// The run's last word on how well the model does: the sampled windows of evaluate() are
// cheap enough to repeat every --eval-every steps but cover a few thousand bytes, whose
// mean moves by a few hundredths of a nat with the text they happen to hold. Returns the
// loss and the number of bytes predicted.
std::pair<double, int64_t> evaluate_whole_split(const catalyst::Runtime& rt, const catalyst::nn::GPT& model,
                                                const catalyst::ByteDataset& data, const Options& o,
                                                catalyst::Device device) {
  catalyst::NoGrad no_grad(rt);
  const std::span<const uint8_t> bytes = data.validation();
  const int64_t windows = (int64_t(bytes.size()) - 1) / o.context;  // each needs context + 1 bytes
  double total = 0;                                                 // the sum over windows of each window's mean loss
  std::vector<int32_t> x, y;
  for (int64_t first = 0; first < windows; first += o.batch) {
    const int64_t rows = std::min(o.batch, windows - first);
    x.resize(size_t(rows * o.context));
    y.resize(x.size());
    for (int64_t i = 0; i < rows * o.context; ++i) {
      const size_t at = size_t(first * o.context + i);
      x[size_t(i)] = bytes[at];
      y[size_t(i)] = bytes[at + 1];
    }
    const double mean =
        model.loss(ids_tensor(device, rows, o.context, x), ids_tensor(device, rows, o.context, y)).item();
    total += mean * double(rows);
  }
  return {windows > 0 ? total / double(windows) : NAN, windows * o.context};
}

// Prints the run's final validation losses: the whole split's, beside the unigram
// baseline, and `sampled`, the last evaluation of the windows log.jsonl tracks. Returns the
// seconds the whole split took.
double print_final_validation(const catalyst::Runtime& rt, const catalyst::nn::GPT& model,
                              const catalyst::ByteDataset& data, const Options& o, catalyst::Device device,
                              double sampled) {
  const auto t0 = Clock::now();
  const auto [whole, predicted] = evaluate_whole_split(rt, model, data, o, device);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "validation loss %.3f nats over the whole validation split (%lld bytes; predicting byte frequencies: %.3f); "
      "%.3f on the %lld sampled windows log.jsonl tracks\n",
      whole, static_cast<long long>(predicted), data.unigram_entropy_nats(), sampled,
      static_cast<long long>(o.eval_batches * o.batch));
  return seconds;
}

// Generates text one byte at a time from a newline, sampling softmax(logits / temperature).
std::string sample(const catalyst::Runtime& rt, const catalyst::nn::GPT& model, const Options& o,
                   catalyst::Device device) {
  catalyst::NoGrad no_grad(rt);
  std::vector<int32_t> tokens = {'\n'};
  uint64_t state = o.seed ^ 0xa5a5a5a5ull;
  std::string text;
  for (int64_t i = 0; i < o.sample_length; ++i) {
    const int64_t start = std::max<int64_t>(0, int64_t(tokens.size()) - o.context);
    std::vector<int32_t> window(tokens.begin() + start, tokens.end());
    const int64_t T = int64_t(window.size());
    catalyst::Tensor logits = model.logits(ids_tensor(device, 1, T, window));
    catalyst::Tensor last = logits.slice(1, T - 1, T).reshape({256});
    // Read in f32 (exact for f32, f16 and bf16 logits), so a device without f64 samples too.
    std::vector<double> l;
    if (last.dtype() == CTL_DTYPE_F64) {
      l = last.to_vector<double>();
    } else {
      const std::vector<float> narrow = catalyst::cast(last, CTL_DTYPE_F32).to_vector<float>();
      l.assign(narrow.begin(), narrow.end());
    }
    double top = *std::max_element(l.begin(), l.end());
    double z = 0;
    for (double& v : l) z += (v = std::exp((v - top) / o.temperature));
    double r = double(catalyst::splitmix64(state) >> 11) * 0x1.0p-53 * z;
    int32_t next = 255;
    for (int32_t c = 0; c < 256; ++c) {
      r -= l[c];
      if (r <= 0) {
        next = c;
        break;
      }
    }
    tokens.push_back(next);
    text.push_back(static_cast<char>(next));
  }
  return text;
}

// The value of `"key": value` in one log record, or "" when the record has none.
std::string log_field(const std::string& record, const std::string& key) {
  const size_t at = record.find("\"" + key + "\": ");
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 4;
  return record.substr(begin, record.find_first_of(",}", begin) - begin);
}

// Drops the log's records past `step`: a run that died between checkpoints logged steps that
// the resumed run trains again, and the plot must show each step once.
void keep_log_until(const std::string& log_path, int64_t step) {
  std::ifstream in(log_path);
  if (!in) return;
  std::string kept, line;
  while (std::getline(in, line)) {
    const std::string at = log_field(line, "step");
    if (!at.empty() && std::strtoll(at.c_str(), nullptr, 10) <= step) kept += line + "\n";
  }
  in.close();
  const std::string temp = log_path + ".tmp";
  std::ofstream(temp, std::ios::trunc) << kept;
  fs::rename(temp, log_path);
}

// loss.png from log.jsonl: the training loss of every step as a line, and the validation
// loss of the steps that evaluated it as a line through points. The two come from separate
// data files: in one file the steps without validation would break its line into dots.
// (tests/gpt/test_progress_and_log.py looks for the validation colour, #d62728.)
void write_plot(const std::string& log_path, const std::string& png_path) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) {
    std::fprintf(stderr, "note: gnuplot is not installed, so no %s (the log is in %s)\n", png_path.c_str(),
                 log_path.c_str());
    return;
  }
  const std::string train_dat = png_path + ".train.dat", val_dat = png_path + ".val.dat";
  {
    std::ifstream in(log_path);
    std::ofstream train(train_dat), val(val_dat);
    std::string line;
    while (std::getline(in, line)) {
      const std::string step = log_field(line, "step"), loss = log_field(line, "loss"),
                        val_loss = log_field(line, "val_loss");
      if (step.empty()) continue;
      if (!loss.empty()) train << step << " " << loss << "\n";
      if (!val_loss.empty()) val << step << " " << val_loss << "\n";
    }
  }
  const std::string script = "set terminal png size 900,500; set output '" + png_path +
                             "'; set xlabel 'step'; set ylabel 'loss (nats)'; set grid; "
                             "plot '" +
                             train_dat + "' using 1:2 with lines lc rgb '#1f77b4' title 'training', '" + val_dat +
                             "' using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title 'validation'";
  const std::string command = "gnuplot -e \"" + script + "\" 2>&1";
  if (std::system(command.c_str()) != 0) std::fprintf(stderr, "note: gnuplot failed; no %s\n", png_path.c_str());
  std::remove(train_dat.c_str());
  std::remove(val_dat.c_str());
}

}  // namespace

#include "data_parallel.hpp"  // uses the helpers above
#include "pipeline.hpp"

int main(int argc, char** argv) {
  Options o;
  std::string error;
  if (!parse(argc - 1, argv + 1, &o, &error)) {
    std::fprintf(stderr, "catalyst train-gpt: %s\n\n", error.c_str());
    usage(stderr);
    return 2;
  }
  const auto started = Clock::now();
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  try {
    if (o.data.empty()) {
      o.data = default_corpus(&error);
      if (o.data.empty()) throw catalyst::Error(CTL_STATUS_NOT_FOUND, error);
    }
    if (wants_data_parallel(o)) return run_data_parallel(o);
    catalyst::Runtime rt;
    // One device, or the stages of a layer split (--devices): the data and the embeddings
    // live on the first, the loss on the last.
    std::vector<catalyst::Device> stages;
    for (const std::string& name : split_devices(o.devices)) stages.push_back(rt.device(name));
    catalyst::Device device = !stages.empty()    ? stages.front()
                              : o.device.empty() ? rt.default_device()
                                                 : rt.device(o.device);
    if (stages.empty()) stages.push_back(device);
    if (o.allow_fallback) {
      catalyst::PlacementPolicy policy;  // every device of the runtime may take an op over
      policy.allow_fallback = true;
      rt.set_placement_policy(policy);
    }
    catalyst::ByteDataset data(o.data, static_cast<size_t>(40 * (o.context + 2)), 0.1);
    const double data_seconds = seconds_since(started);
    fs::create_directories(o.out_dir);
    const std::string checkpoint = o.out_dir + "/checkpoint.safetensors";
    const std::string log_path = o.out_dir + "/log.jsonl";

    catalyst::nn::GPTConfig config{256, o.context, o.width, o.heads, o.layers};
    catalyst::nn::GPT model(device, CTL_DTYPE_F32, config, o.seed);
    model.set_precision(rt, o.compute);
    const auto labels = catalyst::gpt::device_labels(rt);
    std::vector<std::string> stage_labels;
    for (const auto& d : stages) stage_labels.push_back(labels.at(d.get()));
    std::string placement_text = stage_labels.front();
    if (stages.size() > 1) {
      const std::vector<int64_t> counts = catalyst::gpt::blocks_per_stage(stages, o.layers, o.split);
      std::vector<catalyst::Device> block_devices;
      placement_text.clear();
      for (size_t i = 0; i < stages.size(); ++i) {
        for (int64_t k = 0; k < counts[i]; ++k) block_devices.push_back(stages[i]);
        placement_text += (i ? ", " : "") + stage_labels[i] + " (" + std::to_string(counts[i]) + " blocks)";
      }
      model.place_blocks(block_devices);  // parameters move before the optimizer sees them
    }
    const auto params = model.parameters();
    int64_t count = 0;
    for (const auto& [name, p] : params) count += p.numel();
    catalyst::optim::AdamWOptions adam;
    adam.weight_decay = o.weight_decay;
    catalyst::optim::AdamW optimizer(params, adam);
    catalyst::WindowSampler sampler(data.train(), o.seed);
    catalyst::optim::LossScaler scaler(o.compute == CTL_DTYPE_F16);
    const catalyst::gpt::RunIdentity identity{config, CTL_DTYPE_F32, o.batch, o.seed, data.train().size(), o.compute};
    int64_t start_step = 0;

    if (o.resume) {
      // Checked whole before anything changes: a damaged checkpoint leaves the run and --out as they were.
      const catalyst::gpt::Progress progress =
          catalyst::gpt::load_checkpoint(rt, checkpoint, params, optimizer.state(), identity, o.steps);
      start_step = progress.step;
      optimizer.set_steps(progress.optimizer_steps);
      sampler.set_state(progress.sampler_state);
      scaler.set_state(progress.loss_scale, progress.loss_scale_good_steps, progress.skipped_steps);
      model.new_step();  // the weights were replaced
      keep_log_until(log_path, start_step);
      std::fprintf(stderr, "resumed from %s at step %lld\n", checkpoint.c_str(), static_cast<long long>(start_step));
    } else {
      std::ofstream(log_path, std::ios::trunc);  // a fresh log for a fresh run
    }
    const double unigram = data.unigram_entropy_nats();
    std::fprintf(stderr,
                 "training a %lld-parameter GPT (context %lld, width %lld, %lld heads, %lld layers, %s products) on "
                 "%s (%zu bytes) on %s\nbaseline: predicting byte frequencies gives a validation loss of %.3f nats\n",
                 static_cast<long long>(count), static_cast<long long>(o.context), static_cast<long long>(o.width),
                 static_cast<long long>(o.heads), static_cast<long long>(o.layers), o.precision.c_str(), o.data.c_str(),
                 data.size(), placement_text.c_str(), unigram);

    auto save = [&](int64_t step) {
      catalyst::gpt::save_checkpoint(
          checkpoint, params, optimizer.state(), identity,
          {step, optimizer.steps(), sampler.state(), scaler.scale(), scaler.good_steps(), scaler.skipped_steps()});
    };

    std::ofstream log(log_path, std::ios::app);
    const bool tty = isatty(STDERR_FILENO) && !o.quiet;
    const auto begin = Clock::now();
    double eval_seconds = 0;  // validation inside the training loop
    double smoothed = NAN;
    std::optional<double> last_val;  // none until the first evaluation
    bool evaluated_last_step = false;
    std::vector<int32_t> x, y;
    catalyst::gpt::DeviceMeter meter(stages, stage_labels);
    const auto placement_before = rt.placement_report();  // the training loop's share is what follows
    uint64_t ops_ran = 0;                                 // ops the model's devices ran themselves during training
    std::unique_ptr<catalyst::gpt::GraphStep> graph_step;
    if (o.graph) {
      if (!o.dump_graph.empty()) fs::create_directories(o.dump_graph);
      catalyst::gpt::GraphStepOptions g;
      g.rows = o.batch / o.micro_batches;
      g.context = o.context;
      g.micro_batches = o.micro_batches;
      g.loss_factor = 1.0 / double(o.micro_batches);
      g.dump_dir = o.dump_graph;
      graph_step = std::make_unique<catalyst::gpt::GraphStep>(rt, device, model, optimizer, params, g);
    }
    for (int64_t step = start_step; step < o.steps; ++step) {
      const auto t0 = Clock::now();
      const int64_t casts_before = model.autocast() ? model.autocast()->weight_casts() : 0;
      sampler.next_batch(o.batch, o.context, &x, &y);
      // --micro-batches: each piece's loss, scaled by 1/N, adds its gradients to the step's.
      double value = 0;
      const int64_t rows = o.batch / o.micro_batches;
      if (graph_step) {
        value = graph_step->forward_backward(x, y);
        if (step == start_step) std::fprintf(stderr, "graphs: %s\n", graph_step->summary().c_str());
      }
      for (int64_t m = 0; m < o.micro_batches && !graph_step; ++m) {
        const auto from = size_t(m * rows * o.context), to = size_t((m + 1) * rows * o.context);
        const std::vector<int32_t> xm(x.begin() + from, x.begin() + to), ym(y.begin() + from, y.begin() + to);
        catalyst::Tensor loss =
            model.loss(ids_tensor(device, rows, o.context, xm), ids_tensor(device, rows, o.context, ym));
        // The loss scale (f16; 1 otherwise) and the test's injected overflow multiply the
        // loss that backward starts from, not the loss reported.
        double factor = scaler.scale() / double(o.micro_batches);
        if (o.inject_overflow == step + 1) factor *= 1e30;
        if (factor == 1.0) {
          loss.backward();
        } else {
          (loss * factor).backward();
        }
        value += loss.item() / double(o.micro_batches);
      }
      double norm = 0;
      // --graph: the step graph computed the squared norms; f16's scaler is not in play there.
      const bool good =
          graph_step ? (norm = graph_step->clip(o.clip), true) : scaler.unscale_and_clip(rt, params, o.clip, &norm);
      const double lr = catalyst::optim::warmup_cosine(step, o.warmup, o.steps, o.lr, o.min_lr);
      if (good && graph_step) {
        graph_step->update(lr);  // the gradients stay: the step graph overwrites them
      } else if (good) {
        optimizer.step(rt, lr);  // a skipped step (f16 overflow) changes no weight
      }
      if (!graph_step) optimizer.zero_grad();
      // Weight casts this step (forward and backward of every micro-batch, not the evaluation):
      // one per weight, however often and in however many micro-batches it is used.
      const int64_t step_casts = model.autocast() ? model.autocast()->weight_casts() - casts_before : 0;
      model.new_step();  // the 16-bit weight copies are stale now
      smoothed = std::isnan(smoothed) ? value : 0.9 * smoothed + 0.1 * value;
      const double step_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      const bool last = step + 1 == o.steps;
      // Validation every --eval-every steps and after the last: --eval-batches forward passes
      // without gradients, a small fraction of --eval-every training steps. Its time counts in
      // tokens/s, so the rate shown is the rate the run really has.
      evaluated_last_step = (step + 1) % o.eval_every == 0 || last;
      if (evaluated_last_step) {
        const auto e0 = Clock::now();
        last_val = evaluate(rt, model, data, o, device);
        eval_seconds += seconds_since(e0);
      }
      const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
      const double tokens_per_second = double((step - start_step + 1) * o.batch * o.context) / elapsed;
      std::ostringstream record;
      record.precision(9);  // losses to f32 precision: split runs are compared bit for bit
      record << "{\"step\": " << step + 1 << ", \"loss\": " << value << ", \"lr\": " << lr << ", \"grad_norm\": ";
      if (std::isfinite(norm)) {
        record << norm;
      } else {
        record << "null";  // an overflowed f16 step; JSON has no inf or NaN
      }
      record << ", \"tokens_per_second\": " << tokens_per_second << ", \"step_seconds\": " << step_seconds;
      if (evaluated_last_step) record << ", \"val_loss\": " << *last_val;
      if (model.autocast()) record << ", \"weight_casts\": " << step_casts;
      if (scaler.enabled()) {
        record << ", \"loss_scale\": " << scaler.scale() << ", \"skipped\": " << (good ? "false" : "true")
               << ", \"skipped_steps\": " << scaler.skipped_steps();
      }
      const auto use = meter.sample();
      for (const auto& u : use) ops_ran += u.launches;
      if (step == start_step && o.allow_fallback) catalyst::gpt::warn_about_fallbacks(rt, placement_before, ops_ran);
      record << ", " << catalyst::gpt::DeviceMeter::json(use) << "}";
      log << record.str() << "\n";
      log.flush();
      if ((step + 1) % o.checkpoint_every == 0 || last) save(step + 1);
      if (o.kill_after_step == step + 1) raise(SIGKILL);  // a crash, as far as the run can tell
      // The progress bar; validation loss only once there is one.
      const double done = double(step + 1 - start_step) / double(o.steps - start_step);
      const double left = elapsed / done - elapsed;
      const int width = 24, filled = int(done * width);
      std::string bar(filled, '#');
      bar.resize(width, '.');
      char val_text[32] = "";
      if (last_val) std::snprintf(val_text, sizeof val_text, " val %.3f", *last_val);
      char line[512];
      std::snprintf(line, sizeof line, "step %5lld/%lld [%s] loss %.3f%s | %.0f tok/s | %s left | %s",
                    static_cast<long long>(step + 1), static_cast<long long>(o.steps), bar.c_str(), smoothed, val_text,
                    tokens_per_second, human_time(left).c_str(), catalyst::gpt::DeviceMeter::compact(use).c_str());
      if (tty) {
        std::fprintf(stderr, "\r\033[K%s", line);
      } else if (!o.quiet && ((step + 1) % std::max<int64_t>(1, o.eval_every / 2) == 0 || last)) {
        std::fprintf(stderr, "%s\n", line);
      }
    }
    if (tty) std::fprintf(stderr, "\n");
    // The last step evaluated already, unless the run resumed at its end.
    const double train_seconds = seconds_since(begin);
    const auto training_placement = catalyst::gpt::placement_since(placement_before, rt.placement_report());
    const double val = evaluated_last_step ? *last_val : evaluate(rt, model, data, o, device);
    const double whole_seconds = print_final_validation(rt, model, data, o, device, val);
    write_plot(log_path, o.out_dir + "/loss.png");
    const auto s0 = Clock::now();
    const std::string text = sample(rt, model, o, device);
    const double sample_seconds = seconds_since(s0);
    std::ofstream(o.out_dir + "/sample.txt") << text;
    std::printf("---- sample ----\n%s\n----------------\n", text.c_str());
    std::printf("checkpoint %s, log %s, plot %s/loss.png\n", checkpoint.c_str(), log_path.c_str(), o.out_dir.c_str());
    auto span = [](double seconds) {
      if (seconds >= 60) return human_time(seconds);
      char b[32];
      std::snprintf(b, sizeof b, "%.1fs", seconds);
      return std::string(b);
    };
    std::printf(
        "time: reading the text %s, training %s (validation %s of it), final validation %s, sample %s; %s in all\n",
        span(data_seconds).c_str(), span(train_seconds).c_str(), span(eval_seconds).c_str(),
        span(whole_seconds).c_str(), span(sample_seconds).c_str(), span(seconds_since(started)).c_str());
    catalyst::gpt::print_placement_report(rt, training_placement, train_seconds, stdout);
    const catalyst::gpt::FallbackShare share = catalyst::gpt::fallback_share(training_placement, ops_ran);
    if (share.fallbacks) {
      std::printf("fallbacks: %llu of %llu ops during training (%.1f%%)%s\n",
                  static_cast<unsigned long long>(share.fallbacks), static_cast<unsigned long long>(share.asked),
                  100.0 * share.fraction(),
                  share.fraction() > catalyst::gpt::kFallbackWarnFraction ? ", over the 10% the trainer warns at" : "");
    }
    return 0;
  } catch (const catalyst::Error& e) {
    std::fprintf(stderr, "catalyst train-gpt: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "catalyst train-gpt: %s\n", e.what());
    return 1;
  }
}
