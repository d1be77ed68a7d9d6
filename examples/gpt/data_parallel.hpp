// data_parallel.hpp — `catalyst train-gpt --data-parallel`: the trainer's loop on several
// ranks with catalyst::distributed (bindings/cpp distributed.hpp).
//
//   catalyst train-gpt --data-parallel --devices cpu:0,cpu:1   one process, a rank per device
//   mpirun -np 4 catalyst train-gpt [--devices LIST]            a rank per process (MPI plugin)
//
// Included by train_gpt.cpp after its helpers (Options, evaluate, sample, write_plot, ...),
// which it shares. Every rank draws the same global batch of --batch windows from the same
// sampler and trains on its own rows of it (--batch must be a multiple of the ranks), so the
// run follows the one-process run and the sampler's state is the same on every rank; the
// gradients are averaged over ranks after backward (DataParallel). Rank 0 alone evaluates,
// prints, writes log.jsonl (with the seconds each step waited for communication) and writes
// checkpoints; data_parallel.json beside the checkpoint records the number of ranks, and
// --resume refuses another number (the global batch is split differently, so the run could
// not continue exactly).
//
// In one process each rank has a runtime of its own: autograd's recording and backward act
// runtime-wide (catalyst.h), so ranks on one runtime would have to take turns. A device named
// twice (cpu:0,cpu:0) is thus two devices, one in each rank's runtime.
#pragma once

#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

#include "catalyst/distributed.hpp"

namespace {

namespace dist = catalyst::distributed;

// mpirun (Open MPI, or a PMI launcher) started this process as one of several.
int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* v = std::getenv(name)) return std::atoi(v);
  }
  return 0;
}

bool wants_data_parallel(const Options& o) {
  return o.data_parallel || launcher_world_size() > 1;
}

std::vector<std::string> split_devices(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream stream(list);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// What every rank of one run shares.
struct SharedRun {
  const Options* o = nullptr;
  const catalyst::ByteDataset* data = nullptr;
  std::mutex failure_mutex;
  std::string failure;  // the first rank's error, reported once
  ctl_status_code failure_code = CTL_STATUS_OK;
};

// --resume: the checkpoint's run had this many ranks (a run without data_parallel.json had one).
void check_rank_count(const std::string& out_dir, int ranks) {
  const std::string path = out_dir + "/data_parallel.json";
  {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string saved = log_field(text, "ranks");
    const int before = saved.empty() ? 1 : std::atoi(saved.c_str());
    if (before != ranks) {
      throw catalyst::Error(CTL_STATUS_FAILED_PRECONDITION, "--resume: the checkpoint in " + out_dir +
                                                                " was written by a run on " + std::to_string(before) +
                                                                " rank(s), this one has " + std::to_string(ranks) +
                                                                "; resume with the same number of ranks");
    }
  }
}

void write_rank_count(const std::string& out_dir, int ranks) {
  const std::string path = out_dir + "/data_parallel.json", temp = path + ".tmp";
  std::ofstream(temp, std::ios::trunc) << "{\"ranks\": " << ranks << "}\n";
  fs::rename(temp, path);
}

// One rank's training. Only rank 0 prints and writes.
void train_rank(SharedRun& shared, const catalyst::Runtime& rt, catalyst::Device device, dist::Communicator comm) {
  const Options& o = *shared.o;
  const catalyst::ByteDataset& data = *shared.data;
  const int rank = comm.rank(), ranks = comm.size();
  const bool lead = rank == 0;
  const int64_t local_batch = o.batch / ranks;
  const std::string checkpoint = o.out_dir + "/checkpoint.safetensors";
  const std::string log_path = o.out_dir + "/log.jsonl";

  catalyst::nn::GPTConfig config{256, o.context, o.width, o.heads, o.layers};
  catalyst::nn::GPT model(device, CTL_DTYPE_F32, config, o.seed);
  const auto params = model.parameters();
  catalyst::optim::AdamWOptions adam;
  adam.weight_decay = o.weight_decay;
  catalyst::optim::AdamW optimizer(params, adam);
  catalyst::WindowSampler sampler(data.train(), o.seed);
  const catalyst::gpt::RunIdentity identity{config, CTL_DTYPE_F32, o.batch, o.seed, data.train().size(), CTL_DTYPE_F32};
  int64_t start_step = 0;
  if (o.resume) {
    const catalyst::gpt::Progress progress =
        catalyst::gpt::load_checkpoint(rt, checkpoint, params, optimizer.state(), identity, o.steps);
    start_step = progress.step;
    optimizer.set_steps(progress.optimizer_steps);
    sampler.set_state(progress.sampler_state);
    if (lead) {
      keep_log_until(log_path, start_step);
      std::fprintf(stderr, "resumed from %s at step %lld on %d ranks\n", checkpoint.c_str(),
                   static_cast<long long>(start_step), ranks);
    }
  } else if (lead) {
    std::ofstream(log_path, std::ios::trunc);
  }
  dist::DataParallel ddp(rt, comm, params);
  ddp.broadcast_parameters();  // the same already (one seed), but a run must not rely on it

  if (lead) {
    int64_t count = 0;
    for (const auto& [name, p] : params) count += p.numel();
    std::fprintf(stderr,
                 "training a %lld-parameter GPT on %s (%zu bytes), data parallel on %d ranks (%s, %lld windows each "
                 "of a global batch of %lld)\n",
                 static_cast<long long>(count), o.data.c_str(), data.size(), ranks,
                 launcher_world_size() > 1 ? "MPI" : "in-process", static_cast<long long>(local_batch),
                 static_cast<long long>(o.batch));
  }
  std::ofstream log;
  if (lead) log.open(log_path, std::ios::app);
  const bool tty = lead && isatty(STDERR_FILENO) && !o.quiet;
  const auto begin = Clock::now();
  double smoothed = NAN, total_wait = 0, total_step = 0;
  std::optional<double> last_val;
  bool evaluated_last_step = false;
  std::vector<int32_t> x, y;
  catalyst::Tensor loss_sum = catalyst::Tensor::zeros(device, CTL_DTYPE_F32, {1});
  for (int64_t step = start_step; step < o.steps; ++step) {
    const auto t0 = Clock::now();
    sampler.next_batch(o.batch, o.context, &x, &y);  // the global batch; this rank's rows below
    const size_t first = size_t(rank * local_batch * o.context), n = size_t(local_batch * o.context);
    const std::vector<int32_t> xs(x.begin() + first, x.begin() + first + n),
        ys(y.begin() + first, y.begin() + first + n);
    catalyst::Tensor loss =
        model.loss(ids_tensor(device, local_batch, o.context, xs), ids_tensor(device, local_batch, o.context, ys));
    loss.backward();
    ddp.synchronize_gradients();
    double wait = ddp.last_wait_seconds();
    const double norm = catalyst::optim::clip_grad_norm(rt, params, o.clip);  // the same on every rank
    const double lr = catalyst::optim::warmup_cosine(step, o.warmup, o.steps, o.lr, o.min_lr);
    optimizer.step(rt, lr);
    optimizer.zero_grad();
    {  // the global batch's loss: the mean of the ranks' means
      catalyst::NoGrad no_grad(rt);
      catalyst::copy_(loss_sum, loss.detach().reshape({1}));
      const auto w0 = Clock::now();
      comm.allreduce(loss_sum, CTL_COMM_MEAN);
      wait += std::chrono::duration<double>(Clock::now() - w0).count();
    }
    const double value = loss_sum.to_vector<float>()[0];
    smoothed = std::isnan(smoothed) ? value : 0.9 * smoothed + 0.1 * value;
    const double step_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    total_wait += wait;
    total_step += step_seconds;
    const bool last = step + 1 == o.steps;
    evaluated_last_step = (step + 1) % o.eval_every == 0 || last;
    if (lead && evaluated_last_step) last_val = evaluate(rt, model, data, o, device);
    if (!lead) continue;
    const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
    const double tokens_per_second = double((step - start_step + 1) * o.batch * o.context) / elapsed;
    std::ostringstream record;
    record.precision(6);
    record << "{\"step\": " << step + 1 << ", \"loss\": " << value << ", \"lr\": " << lr << ", \"grad_norm\": " << norm
           << ", \"tokens_per_second\": " << tokens_per_second << ", \"step_seconds\": " << step_seconds
           << ", \"comm_wait_seconds\": " << wait << ", \"ranks\": " << ranks;
    if (evaluated_last_step) record << ", \"val_loss\": " << *last_val;
    record << "}";
    log << record.str() << "\n";
    log.flush();
    if ((step + 1) % o.checkpoint_every == 0 || last) {
      catalyst::gpt::save_checkpoint(checkpoint, params, optimizer.state(), identity,
                                     {step + 1, optimizer.steps(), sampler.state(), 1.0, 0, 0});
      write_rank_count(o.out_dir, ranks);
    }
    if (o.kill_after_step == step + 1) raise(SIGKILL);
    const double done = double(step + 1 - start_step) / double(o.steps - start_step);
    const double left = elapsed / done - elapsed;
    const int width = 24, filled = int(done * width);
    std::string bar(filled, '#');
    bar.resize(width, '.');
    char val_text[32] = "";
    if (last_val) std::snprintf(val_text, sizeof val_text, " val %.3f", *last_val);
    char line[320];
    std::snprintf(line, sizeof line,
                  "step %5lld/%lld [%s] loss %.3f%s | %.0f tok/s global (%d ranks) | comm %.0f%% | %s left",
                  static_cast<long long>(step + 1), static_cast<long long>(o.steps), bar.c_str(), smoothed, val_text,
                  tokens_per_second, ranks, 100.0 * total_wait / std::max(total_step, 1e-9), human_time(left).c_str());
    if (tty) {
      std::fprintf(stderr, "\r\033[K%s", line);
    } else if (!o.quiet && ((step + 1) % std::max<int64_t>(1, o.eval_every / 2) == 0 || last)) {
      std::fprintf(stderr, "%s\n", line);
    }
  }
  if (!lead) return;
  if (tty) std::fprintf(stderr, "\n");
  const double val = evaluated_last_step ? *last_val : evaluate(rt, model, data, o, device);
  print_final_validation(rt, model, data, o, device, val);
  write_plot(log_path, o.out_dir + "/loss.png");
  const std::string text = sample(rt, model, o, device);
  std::ofstream(o.out_dir + "/sample.txt") << text;
  std::printf("---- sample ----\n%s\n----------------\n", text.c_str());
  std::printf("checkpoint %s, log %s, plot %s/loss.png\n", checkpoint.c_str(), log_path.c_str(), o.out_dir.c_str());
}

catalyst::Runtime plain_runtime() {
  return catalyst::Runtime();
}

// Runs the whole data-parallel training; the exit status of main.
int run_data_parallel(const Options& o) {
  if (o.compute != CTL_DTYPE_F32) {  // mpirun implies data parallelism, past parse()'s check
    throw catalyst::Error(CTL_STATUS_INVALID_ARGUMENT,
                          "--precision " + o.precision + " runs on one device for now, not data-parallel");
  }
  SharedRun shared;
  shared.o = &o;
  catalyst::ByteDataset data(o.data, static_cast<size_t>(40 * (o.context + 2)), 0.1);
  shared.data = &data;
  fs::create_directories(o.out_dir);
  const std::vector<std::string> names = split_devices(o.devices);
  const uint32_t timeout_ms = 120000;  // an evaluation on rank 0 keeps the others waiting this long at most
  if (launcher_world_size() > 1) {
    catalyst::Runtime rt = plain_runtime();
    dist::Communicator comm = dist::Communicator::from_plugin(rt, "mpi", timeout_ms);
    if (o.resume) check_rank_count(o.out_dir, comm.size());
    if (o.batch % comm.size() != 0) {
      throw catalyst::Error(CTL_STATUS_INVALID_ARGUMENT, "--batch (" + std::to_string(o.batch) +
                                                             ") must be a multiple of the number of ranks (" +
                                                             std::to_string(comm.size()) + ")");
    }
    // This process's device: its entry of --devices (cycled), else the default device.
    catalyst::Device device = names.empty() ? rt.default_device() : rt.device(names[comm.rank() % names.size()]);
    train_rank(shared, rt, device, comm);
    return 0;
  }
  if (names.size() < 2) {
    throw catalyst::Error(CTL_STATUS_INVALID_ARGUMENT,
                          "--data-parallel in one process needs --devices with two or more devices (e.g. "
                          "--devices cpu:0,cpu:0: each rank has a runtime of its own), or start it with mpirun");
  }
  const int ranks = int(names.size());
  if (o.batch % ranks != 0) {
    throw catalyst::Error(CTL_STATUS_INVALID_ARGUMENT, "--batch (" + std::to_string(o.batch) +
                                                           ") must be a multiple of the number of devices (" +
                                                           std::to_string(ranks) + ")");
  }
  if (o.resume) check_rank_count(o.out_dir, ranks);
  std::vector<catalyst::Runtime> runtimes;
  std::vector<catalyst::Device> devices;
  for (const auto& name : names) {
    runtimes.push_back(plain_runtime());
    devices.push_back(runtimes.back().device(name));
  }
  auto comms = dist::Communicator::in_process(runtimes[0], devices, timeout_ms);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        train_rank(shared, runtimes[r], devices[r], comms[r]);
      } catch (const catalyst::Error& e) {
        std::lock_guard lock(shared.failure_mutex);
        if (shared.failure.empty()) {
          shared.failure = "rank " + std::to_string(r) + ": " + e.what();
          shared.failure_code = e.code();
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(shared.failure_mutex);
        if (shared.failure.empty()) {
          shared.failure = "rank " + std::to_string(r) + ": " + e.what();
          shared.failure_code = CTL_STATUS_INTERNAL;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  if (!shared.failure.empty()) throw catalyst::Error(shared.failure_code, shared.failure);
  return 0;
}

}  // namespace
