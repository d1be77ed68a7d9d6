"""GPT training with and without graphs (docs/graphs.md, issue 25): tokens/s, plugin launches
per step and device memory for `catalyst train-gpt --graph` beside `--no-graph`, on the CPU
plugin and on OpenCL (PoCL where no GPU driver is installed), in one run.

Each row is the median over 3 runs, modes alternating so that load on a shared machine
hits both alike; a run's rate is its median step time over the steps after the first
(the first captures and optimises) and before the last (which validates). Launches are the
device's plugin calls per step; memory is the device's peak over the run and, for graphs,
what stays in use while steps run. "In plugin" is the share of a step's wall time spent
inside the device's plugin (its kernels, and waits for them): the rest is what the core and
the trainer cost, the most a graph could remove.

usage: bench/graph_speed.py [BUILD_DIR] [--steps N] [--devices cpu,opencl:0]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

p = argparse.ArgumentParser()
p.add_argument("build", nargs="?", default="build")
p.add_argument("--steps", type=int, default=30)
p.add_argument("--devices", default="cpu,opencl:0")
p.add_argument("--repeats", type=int, default=3)
a = p.parse_args()
T = os.path.join(a.build, "bin", "catalyst-train-gpt")
TMP = tempfile.mkdtemp(prefix="catalyst-graph-bench-")


def run(device, mode, i):
    out = os.path.join(TMP, f"{device.replace(':', '_')}-{mode}-{i}")
    proc = subprocess.run([T, "--device", device, mode, "--steps", str(a.steps), "--eval-every", "100000",
                           "--checkpoint-every", "100000", "--sample-length", "1", "--quiet", "--out", out],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"train-gpt --device {device} {mode} failed:\n{proc.stderr}")
    recs = [json.loads(l) for l in open(os.path.join(out, "log.jsonl"))]
    steady = recs[1:-1]
    step = statistics.median(r["step_seconds"] for r in steady)
    dev = [r["devices"][0] for r in steady]
    return {
        "step": step,
        "launches": statistics.median(d["launches"] for d in dev),
        "peak": recs[-1]["devices"][0]["peak_memory_bytes"],
        "in_use": statistics.median(d["memory_bytes"] for d in dev),
        "busy": statistics.median(d["busy"] for d in dev),
        "tokens_per_step": recs[0]["tokens_per_second"] * recs[0]["step_seconds"],
        "stderr": proc.stderr,
    }


print(f"# graph_speed.py: train-gpt defaults, {a.steps} steps per run, median of {a.repeats} runs; "
      f"load average at start {os.getloadavg()[0]:.2f}", flush=True)
print(f"{'device':10s} {'mode':11s} {'tokens/s':>9s} {'launches/step':>13s} {'peak MiB':>9s} {'in use MiB':>10s} "
      f"{'in plugin':>9s}")
for device in a.devices.split(","):
    results = {"--no-graph": [], "--graph": []}
    for i in range(a.repeats):
        for mode in results:
            results[mode].append(run(device, mode, i))
    summary = {}
    for mode, rs in results.items():
        step = statistics.median(r["step"] for r in rs)
        tps = rs[0]["tokens_per_step"] / step
        launches = statistics.median(r["launches"] for r in rs)
        peak = statistics.median(r["peak"] for r in rs) / 2**20
        in_use = statistics.median(r["in_use"] for r in rs) / 2**20
        busy = statistics.median(r["busy"] for r in rs)
        summary[mode] = (tps, launches, peak, in_use)
        print(f"{device:10s} {mode:11s} {tps:9.0f} {launches:13.0f} {peak:9.1f} {in_use:10.1f} {100 * busy:8.0f}%",
              flush=True)
    (te, le, pe, _), (tg, lg, pg, ug) = summary["--no-graph"], summary["--graph"]
    print(f"{device:10s} graph/eager: {tg / te:.2f}x tokens/s, {lg / le:.2f}x launches, "
          f"memory while stepping {ug / pe:.2f}x of eager's peak (run peak {pg / pe:.2f}x)", flush=True)
    for line in results["--graph"][0]["stderr"].splitlines():
        if line.startswith("graphs:"):
            print(f"{device:10s} {line}")
print(f"# load average at end {os.getloadavg()[0]:.2f}")
