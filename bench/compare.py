#!/usr/bin/python3
"""compare.py — issue 6's comparison: Catalyst's CPU plugin beside oneDNN, OpenBLAS and PyTorch,
in one run, with the machine's own FMA peak and STREAM triad, and a checklist of the issue's
acceptance items computed from what this run measured; and issue 26's mixed-precision row
(GPT training tokens/s in f32, bf16 and f16 beside PyTorch's f32 and bf16 autocast).

usage: bench/compare.py [BUILD_DIR] [--quick] [--repeats R] [--min-time S] [--threads 1,2]
                        [--sizes N,...] [--lowp-sizes N,...] [--no-training] [--conformance]
                        [--demo-loss] [--lock FILE] [--log FILE]

BUILD_DIR (default ./build) must hold the programs; this script builds nothing and says how
to build what is missing. Standard library only. Every figure is the median over --repeats
runs; in each repeat every program runs once per thread count, Catalyst first and then each
peer, so slow drift in the machine's load reaches all of them alike. bench/README.md explains
each figure and the checklist.
"""
import argparse
import fcntl
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")

# Each program, the CMake target that builds it, and what to install when CMake skipped it.
PROGRAMS = {
    "catalyst": ("catalyst-kernels-bench", "libbenchmark-dev"),
    "machine": ("catalyst-bench-machine", "libbenchmark-dev"),
    "onednn": ("catalyst-bench-onednn", "libdnnl-dev"),
    "openblas": ("catalyst-bench-openblas", "libopenblas-dev"),
    "train": ("catalyst-train-bench", None),
    "train_gpt": ("catalyst-train-gpt", None),
}
PEERS = ("onednn", "openblas", "pytorch")
START = time.monotonic()


def progress(message):
    print(f"[{time.monotonic() - START:6.0f}s] {message}", file=sys.stderr, flush=True)


def parse_args():
    ints = lambda text: [int(s) for s in text.split(",") if s]  # noqa: E731
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", nargs="?", default="./build", help="build directory (default ./build)")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: tiny sizes, one repeat, short timings (the figures mean little)")
    p.add_argument("--repeats", type=int, help="runs of every program (default 3; --quick 1)")
    p.add_argument("--min-time", type=float, help="seconds each case runs for, at least (default 0.5)")
    p.add_argument("--threads", type=ints, help="thread counts of the sgemm comparison (default 1 and all CPUs)")
    p.add_argument("--sizes", type=ints, help="sgemm N (default 128,256,512,1024,2048,4096)")
    p.add_argument("--lowp-sizes", type=ints, help="f16 and bf16 N (default 1024,2048)")
    p.add_argument("--no-training", action="store_true", help="skip the GPT and MLP comparison (item 5)")
    p.add_argument("--demo-loss", action="store_true",
                   help="also train the demo's model (train-gpt's defaults) in f32 and in bf16 and compare their "
                        "validation losses (issue 26; minutes per run)")
    p.add_argument("--conformance", action="store_true",
                   help="also run the conformance suite at full on every ISA path (item 6; minutes)")
    p.add_argument("--log", help="also write every measurement as JSON lines to this file")
    p.add_argument("--lock", help="hold this lock file (flock) while each program runs, and only then: on a shared "
                                  "machine, other timings wait for each program, not for the whole run")
    a = p.parse_args()
    cpus = len(os.sched_getaffinity(0))
    quick = a.quick
    a.repeats = a.repeats or (1 if quick else 3)
    a.min_time = a.min_time if a.min_time is not None else (0.02 if quick else 0.5)
    a.warmup = 0.0 if quick else 0.1
    a.threads = a.threads or sorted({1, cpus})
    a.sizes = a.sizes or ([64, 128] if quick else [128, 256, 512, 1024, 2048, 4096])
    a.lowp_sizes = a.lowp_sizes or ([128] if quick else [1024, 2048])
    a.add_elements = 1 << 20 if quick else 64 << 20
    a.norm = (256, 256) if quick else (4096, 4096)
    return a


def find_programs(build):
    found, missing = {}, []
    for key, (target, package) in PROGRAMS.items():
        path = os.path.join(build, "bin", target)
        if os.access(path, os.X_OK):
            found[key] = path
        else:
            hint = f" (CMake builds it only when {package} is installed: apt-get install {package}," \
                   " then configure again)" if package else ""
            missing.append(f"  cmake --build {build} --target {target}{hint}")
    return found, missing


def size_args(a):
    rows, cols = a.norm
    return ["--sizes", ",".join(map(str, a.sizes)), "--lowp-sizes", ",".join(map(str, a.lowp_sizes)),
            "--add-elements", str(a.add_elements), "--norm-rows", str(rows), "--norm-cols", str(cols)]


def thread_env(threads, extra=None):
    """The environment of one program: every thread setting given explicitly."""
    env = dict(os.environ)
    env.update(CATALYST_CPU_THREADS=str(threads), OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    env.update(extra or {})
    return env


LOCK_PATH = None  # --lock


def run(command, env, what):
    """Runs a program (holding --lock while it runs) and returns its stdout; on failure, says so
    and returns None."""
    try:
        with open(LOCK_PATH or os.devnull, "a") as lock:
            if LOCK_PATH:
                fcntl.flock(lock, fcntl.LOCK_EX)
            done = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  check=False, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        progress(f"  {what}: could not run: {e}")
        return None
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        progress(f"  {what}: exit status {done.returncode}\n{tail}")
        return None
    return done.stdout


def google_benchmark(program, args, env, filter_regex, a, source, threads, sink, context=None):
    """Runs one Google Benchmark program; each case becomes a record in sink (a Sink, or a list
    whose program's context lines go to `context`)."""
    command = [program, "--benchmark_format=json", f"--benchmark_min_time={a.min_time}",
               f"--benchmark_min_warmup_time={a.warmup}", f"--benchmark_filter={filter_regex}"] + args
    out = run(command, env, f"{source} ({threads} threads)")
    if out is None:
        return
    report = json.loads(out)
    if context is None:
        context = sink.context.setdefault(source, {})
    context.update(report.get("context", {}))
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for b in report.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        # Cases timed by wall clock (all of them) are named NAME/real_time.
        r = {"source": source, "threads": threads, "case": b["name"].removesuffix("/real_time")}
        if b.get("error_occurred"):
            r["error"] = b.get("error_message", "error")
        else:
            r["seconds"] = b["real_time"] * scale[b.get("time_unit", "ns")]
            for key in ("flops", "bytes_per_second", "seconds_per_call", "max_abs_error", "tolerance_ratio"):
                if key in b:
                    r[key] = b[key]
        sink.append(r) if isinstance(sink, list) else sink.add(r)


def onednn(program, args, threads, filter_regex, a, sink, source="onednn", extra_env=None):
    """oneDNN under both OpenMP wait policies, keeping each case's better figure: GNU OpenMP's
    default (spin, then sleep) wins on an idle machine, passive when other work shares the
    cores, and the peer deserves its best settings. One thread has no waiting to tune."""
    policies = [None] if threads == 1 else [None, "passive"]
    runs, context = [], sink.context.setdefault(source, {})
    for policy in policies:
        env = thread_env(threads, extra_env)
        env.pop("OMP_WAIT_POLICY", None)
        if policy:
            env["OMP_WAIT_POLICY"] = policy
        records = []
        google_benchmark(program, args, env, filter_regex, a, source, threads, records, context)
        runs.append((policy or "default", records))
    for case in dict.fromkeys(r["case"] for _, records in runs for r in records):
        candidates = [(policy, r) for policy, records in runs for r in records if r["case"] == case]
        timed = [(policy, r) for policy, r in candidates if "seconds" in r]
        policy, best = min(timed, key=lambda pr: pr[1]["seconds"]) if timed else candidates[0]
        sink.add(dict(best, omp_wait_policy=policy))
        context.setdefault("wait_policy_wins", {}).setdefault(f"{case}/{threads}T", []).append(policy)


def cpu_flags():
    with open("/proc/cpuinfo") as f:
        return next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])


def aten_capabilities():
    """The ATEN_CPU_CAPABILITY settings PyTorch is tried with: its own choice (unset) and, where
    the CPU has AVX-512, avx512, which PyTorch does not pick by itself on every CPU."""
    return [None, "avx512"] if "avx512f" in cpu_flags() else [None]


def torch_env(threads, capability=None):
    """PyTorch's environment: passive OpenMP waiting, OpenBLAS told the core type a VM's CPUID
    hides, Debian's OpenBLAS first (or TORCH_BLAS_DIR), and ATEN_CPU_CAPABILITY when given."""
    env = thread_env(threads, {"OMP_WAIT_POLICY": "passive", "OPENBLAS_CORETYPE": "SkylakeX"})
    env.pop("ATEN_CPU_CAPABILITY", None)
    if capability:
        env["ATEN_CPU_CAPABILITY"] = capability
    blas_dir = os.environ.get("TORCH_BLAS_DIR")
    if blas_dir is None and os.path.exists("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"):
        blas_dir = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
    if blas_dir:
        env["LD_LIBRARY_PATH"] = blas_dir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def pytorch(a, threads, cases, sink):
    """PyTorch's kernels under each ATEN_CPU_CAPABILITY of aten_capabilities(), keeping each case's
    better figure, as onednn() does with the wait policies."""
    runs = []
    for capability in aten_capabilities():
        command = [PYTHON, os.path.join(HERE, "torch_kernels_bench.py"), "--threads", str(threads),
                   "--min-time", str(a.min_time), "--cases", ",".join(cases)] + size_args(a)
        out = run(command, torch_env(threads, capability), f"pytorch ({threads} threads, "
                  f"ATEN_CPU_CAPABILITY={capability or 'unset'})")
        records = []
        for line in (out or "").splitlines():
            r = json.loads(line)
            if "context" in r:
                sink.context["pytorch"] = r["context"]
                continue
            r.update(source="pytorch", threads=threads)
            records.append(r)
        runs.append((capability or "default", records))
    wins = sink.context.setdefault("aten_capability_wins", [])
    for case in dict.fromkeys(r["case"] for _, records in runs for r in records):
        candidates = [(c, r) for c, records in runs for r in records if r["case"] == case]
        timed = [(c, r) for c, r in candidates if "seconds" in r]
        capability, best = min(timed, key=lambda cr: cr[1]["seconds"]) if timed else candidates[0]
        sink.add(dict(best, aten_cpu_capability=capability))
        wins.append(capability)


class Sink:
    """Every measurement of the run, and the context lines the programs reported."""

    def __init__(self, log):
        self.records, self.context, self.log = [], {}, log

    def add(self, record):
        self.records.append(record)
        if self.log:
            self.log.write(json.dumps(record) + "\n")
            self.log.flush()

    def values(self, source, case, threads, key):
        return [r[key] for r in self.records
                if r["source"] == source and r["case"] == case and r["threads"] == threads and key in r]

    def median(self, source, case, threads, key):
        v = self.values(source, case, threads, key)
        return statistics.median(v) if v else None

    def error(self, source, case, threads):
        return next((r["error"] for r in self.records if r["source"] == source and r["case"] == case
                     and r["threads"] == threads and "error" in r), None)


def measure_kernels(a, programs, sink):
    top = max(a.threads)
    f32 = "^matmul/f32/"
    for repeat in range(1, a.repeats + 1):
        for threads in a.threads:
            # At the top thread count every case runs; at the others only the sgemm sizes.
            everything = threads == top
            tag = f"repeat {repeat}/{a.repeats}, {threads} thread{'s' if threads > 1 else ''}"
            progress(f"{tag}: catalyst")
            compared = "^(matmul/|add/|softmax/|layer_norm/|op_overhead/)"  # the cases with a peer
            google_benchmark(programs["catalyst"], size_args(a), thread_env(threads),
                             compared if everything else f32, a, "catalyst", threads, sink)
            if "onednn" in programs:
                progress(f"{tag}: oneDNN")
                onednn(programs["onednn"], size_args(a), threads, "^matmul/" if everything else f32, a, sink)
            if "onednn" in programs and everything and "amx" in sink.context.get("onednn", {}).get("onednn_isa", ""):
                # Where the CPU has AMX oneDNN uses it for bf16; its bf16 figure without AMX (the
                # AVX512-BF16 dot product only, as on CPUs without tiles) is shown beside it.
                progress(f"{tag}: oneDNN bf16 without AMX")
                onednn(programs["onednn"], size_args(a), threads, "^matmul/bf16/", a, sink, "onednn_no_amx",
                       {"ONEDNN_MAX_CPU_ISA": "AVX512_CORE_BF16", "DNNL_MAX_CPU_ISA": "AVX512_CORE_BF16"})
            if "openblas" in programs:
                progress(f"{tag}: OpenBLAS")
                google_benchmark(programs["openblas"], size_args(a),
                                 thread_env(threads, {"OPENBLAS_CORETYPE": "SkylakeX"}), f32, a, "openblas",
                                 threads, sink)
            progress(f"{tag}: PyTorch")
            pytorch(a, threads, [""] if everything else ["matmul/f32/"], sink)
            progress(f"{tag}: machine (FMA peak{', STREAM triad' if everything else ''})")
            google_benchmark(programs["machine"], size_args(a) + ["--threads", str(threads)], thread_env(threads),
                             "." if everything else "^fma_peak/", a, "machine", threads, sink)


def measure_training(a, programs, sink):
    """Item 5 through bench/compare_training.sh, whose JSON lines it keeps."""
    top = max(a.threads)
    for model in ("gpt", "mlp"):  # one model at a time, so that --lock is held for one at a time
        with tempfile.NamedTemporaryFile("r", suffix=".jsonl") as log:
            env = thread_env(top, {"BENCH_LOG": log.name, "BENCH_REPEATS": str(a.repeats), "BENCH_MODELS": model})
            if aten_capabilities()[-1]:  # PyTorch's training runs get AVX-512 where the CPU has it
                env["ATEN_CPU_CAPABILITY"] = aten_capabilities()[-1]
            if a.quick:
                env.update(BENCH_MLP_STEPS="2", BENCH_MLP_WARMUP="1", BENCH_GPT_STEPS="1", BENCH_GPT_WARMUP="0")
            progress(f"training {model}: bench/compare_training.sh ({a.repeats} runs of each framework, {top} threads)")
            build = os.path.dirname(os.path.dirname(programs["train"]))
            if run([os.path.join(HERE, "compare_training.sh"), build], env, "compare_training.sh") is not None:
                training_records(log, top, sink)


def training_records(log, top, sink):
    """compare_training.sh's JSON lines (BENCH_LOG) as records."""
    for line in log:
        if line.strip():
            r = json.loads(line)
            for key in ("steps_per_second", "tokens_per_second"):
                if key in r:
                    sink.add({"source": "catalyst" if r["framework"] == "catalyst" else "pytorch",
                              "threads": top, "case": f"train/{r['model']}/{key}", key: r[key]})


# The benchmark GPT of train_bench.cpp and torch_train_bench.py: vocab 256, context 128, width
# 128, 4 heads, 4 layers, batch 16, AdamW, gradients clipped to 1.
GPT_BENCH = ["--context", "128", "--width", "128", "--heads", "4", "--layers", "4", "--batch", "16"]
PRECISIONS = ("f32", "bf16", "f16")


def bench_text(folder):
    """A text for train-gpt that needs no package: this repository's documentation."""
    root = os.path.dirname(HERE)
    path = os.path.join(folder, "text.txt")
    with open(path, "w") as out:
        for name in ["README.md"] + sorted(os.listdir(os.path.join(root, "docs"))):
            full = os.path.join(root, name) if name == "README.md" else os.path.join(root, "docs", name)
            if full.endswith(".md"):
                with open(full, errors="replace") as f:
                    out.write(f.read())
    return path


def train_gpt_log(program, args, threads, what):
    """Runs catalyst train-gpt with `args` in a scratch folder; its log.jsonl records, or None."""
    with tempfile.TemporaryDirectory() as folder:
        command = [program, "--data", bench_text(folder), "--out", os.path.join(folder, "run"), "--quiet",
                   "--sample-length", "1"] + args
        if run(command, thread_env(threads), what) is None:
            return None
        with open(os.path.join(folder, "run", "log.jsonl")) as f:
            return [json.loads(line) for line in f if line.strip()]


def measure_mixed_precision(a, programs, sink):
    """Issue 26's row: the benchmark GPT trained by catalyst train-gpt in each --precision
    (median step time over the steps after the warm-up; no evaluation inside the timed
    steps), and PyTorch's twin in f32 and under torch.autocast(bf16), run after run."""
    top = max(a.threads)
    warmup, steps = (1, 1) if a.quick else (3, 10)
    for repeat in range(1, a.repeats + 1):
        for precision in PRECISIONS:
            progress(f"mixed precision, repeat {repeat}/{a.repeats}: catalyst train-gpt --precision {precision}")
            log = train_gpt_log(programs["train_gpt"], GPT_BENCH + [
                "--steps", str(warmup + steps), "--eval-every", str(10 * (warmup + steps)), "--eval-batches", "1",
                "--checkpoint-every", str(10 * (warmup + steps)), "--precision", precision], top,
                f"train-gpt --precision {precision}")
            if log:
                timed = [r["step_seconds"] for r in log[warmup:]]
                sink.add({"source": "catalyst", "threads": top, "case": f"mixed/gpt/{precision}",
                          "tokens_per_second": 16 * 128 / statistics.median(timed),
                          "skipped_steps": log[-1].get("skipped_steps", 0)})
        capability = aten_capabilities()[-1]
        for autocast in ("f32", "bf16"):
            progress(f"mixed precision, repeat {repeat}/{a.repeats}: PyTorch {autocast}")
            command = [PYTHON, os.path.join(HERE, "torch_train_bench.py"), "gpt", "--threads", str(top),
                       "--steps", str(steps), "--warmup", str(warmup)] + (["--autocast", "bf16"] if autocast == "bf16"
                                                                           else [])
            out = run(command, torch_env(top, capability), f"PyTorch GPT {autocast}")
            for line in (out or "").splitlines():
                r = json.loads(line)
                sink.add({"source": "pytorch", "threads": top, "case": f"mixed/gpt/{autocast}",
                          "tokens_per_second": r["tokens_per_second"], "aten_cpu_capability": capability or "default"})


def measure_demo_loss(a, programs, sink):
    """Issue 26: the demo's run (train-gpt's defaults) in f32 and in bf16, same seed; their final
    validation losses."""
    for precision in ("f32", "bf16"):
        progress(f"demo loss: catalyst train-gpt (defaults) --precision {precision} (minutes)")
        with tempfile.TemporaryDirectory() as folder:
            args = ["--out", os.path.join(folder, "run"), "--quiet", "--sample-length", "1", "--precision", precision]
            fortunes = os.path.isdir("/usr/share/games/fortunes")
            command = [programs["train_gpt"]] + args + ([] if fortunes else ["--data", bench_text(folder)])
            stdout = run(command, thread_env(max(a.threads)), f"demo --precision {precision}")
            if stdout is None:
                continue
            with open(os.path.join(folder, "run", "log.jsonl")) as f:
                log = [json.loads(line) for line in f if line.strip()]
            # The final loss over the whole validation split, as the demo prints it.
            whole = re.search(r"validation loss ([\d.]+) nats over the whole validation split", stdout)
            if whole is None:  # a train-gpt older than the whole-split figure: no like-for-like loss
                progress(f"  demo --precision {precision}: no whole-split validation loss in its output")
                continue
            sink.add({"source": "catalyst", "threads": max(a.threads), "case": f"demo/{precision}",
                      "val_loss": float(whole.group(1)),
                      "steps": log[-1]["step"], "text": "fortunes" if fortunes else "docs"})


def measure_conformance(a, build, sink):
    """Item 6: the conformance suite at full on each ISA path the CPU plugin can be forced to."""
    tool = os.path.join(build, "bin", "catalyst")
    for isa in ("baseline", "avx2", "avx512"):
        progress(f"conformance at full, CATALYST_CPU_ISA={isa}")
        with tempfile.TemporaryDirectory() as folder:
            report = os.path.join(folder, "report.json")
            env = thread_env(max(a.threads), {"CATALYST_CPU_ISA": isa})
            out = run([tool, "conformance", "--plugin", "cpu", "--level", "full", "--report", report], env,
                      f"conformance ({isa})")
            level = "failed"
            if out is not None and os.path.exists(report):
                with open(report) as f:
                    level = json.load(f).get("level_reached", "none")
        sink.add({"source": "catalyst", "threads": max(a.threads), "case": f"conformance/{isa}", "level": level})


# ---------------------------------------------------------------------------------------- report

def fmt(value, digits=1):
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def ratio(x, y):
    return x / y if x is not None and y else None


def times(r):
    """A ratio as printed: 1.23x, or - when one side is missing."""
    return "-" if r is None else f"{r:.2f}x"


def table(header, rows):
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
    for row in [header] + rows:
        print("  " + "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
    print()


class Checklist:
    def __init__(self):
        self.items = []

    def add(self, item, text, holds, detail):
        """holds: True, False, or None when this run did not measure it."""
        self.items.append((item, text, holds, detail))

    def print(self):
        print("Acceptance checklist of issues 6 and 26 (from this run's medians)")
        for item, text, holds, detail in self.items:
            mark = "HOLDS" if holds else "not measured" if holds is None else "FAILS"
            print(f"  [{mark:>12}] {item}. {text}: {detail}")


def report(a, sink, programs):
    top = max(a.threads)
    g = lambda source, case, t: ratio(sink.median(source, case, t, "flops"), 1e9)  # noqa: E731
    checks = Checklist()

    print("\n=== 1. sgemm, f32 N x N by N x N, GFLOP/s (ratio = Catalyst / best peer) ===")
    sgemm_fails, sgemm_missing = [], []
    for t in a.threads:
        peak = g("machine", f"fma_peak/f32/threads:{t}", t)
        print(f"{t} thread{'s' if t > 1 else ''}; FMA peak measured: {fmt(peak)} GFLOP/s "
              f"({sink.context.get('machine', {}).get('fma_isa', '?')})")
        rows = []
        for n in a.sizes:
            case = f"matmul/f32/{n}"
            figures = {s: g(s, case, t) for s in ("catalyst",) + PEERS}
            best = max((v, s) for s, v in figures.items() if s != "catalyst" and v is not None) \
                if any(figures[s] is not None for s in PEERS) else (None, "-")
            vs_onednn = ratio(figures["catalyst"], figures["onednn"])
            if vs_onednn is None:
                sgemm_missing.append(f"N={n}/{t}T")
            elif vs_onednn < 1.0:
                sgemm_fails.append(f"N={n}/{t}T {vs_onednn:.2f}x")
            rows.append([n] + [fmt(figures[s]) for s in ("catalyst",) + PEERS] +
                        [best[1], times(ratio(figures["catalyst"], best[0])), times(vs_onednn),
                         fmt(100 * ratio(figures["catalyst"], peak) if peak else None) + "%"])
        table(["N", "catalyst", "oneDNN", "OpenBLAS", "PyTorch", "best peer", "vs best", "vs oneDNN", "% of peak"],
              rows)
    wins = [p for policies in sink.context.get("onednn", {}).get("wait_policy_wins", {}).values() for p in policies]
    if wins:
        print(f"oneDNN's better OMP_WAIT_POLICY, case by case: unset {wins.count('default')} times, "
              f"passive {wins.count('passive')} times\n")
    checks.add(1, "sgemm >= 1.0x oneDNN at every N and thread count",
               None if sgemm_missing and not sgemm_fails else not sgemm_fails,
               "all hold" if not sgemm_fails and not sgemm_missing else
               "; ".join(([f"below: {', '.join(sgemm_fails)}"] if sgemm_fails else []) +
                         ([f"no oneDNN figure: {', '.join(sgemm_missing)}"] if sgemm_missing else [])))
    big = max(a.sizes)
    shares = [(t, ratio(g("catalyst", f"matmul/f32/{big}", t), g("machine", f"fma_peak/f32/threads:{t}", t)))
              for t in a.threads]
    checks.add(1, f"sgemm at N={big} >= 85% of the FMA peak",
               None if any(s is None for _, s in shares) else all(s >= 0.85 for _, s in shares),
               ", ".join(f"{t}T {fmt(100 * s if s is not None else None)}%" for t, s in shares))

    print(f"=== 2. f16 and bf16 matmul, {top} threads, GFLOP/s ===")
    rows, f16_ok, bf16_ok, tol_ok, lowp_detail = [], [], [], [], []
    for n in a.lowp_sizes:
        c32, c16, cb = (g("catalyst", f"matmul/{d}/{n}", top) for d in ("f32", "f16", "bf16"))
        ob, pb = g("onednn", f"matmul/bf16/{n}", top), g("pytorch", f"matmul/bf16/{n}", top)
        ob_no_amx = g("onednn_no_amx", f"matmul/bf16/{n}", top)
        best_bf16 = max((v for v in (ob, pb) if v is not None), default=None)
        err = {(s, d): (sink.median(s, f"matmul/{d}/{n}", top, "max_abs_error"),
                        sink.median(s, f"matmul/{d}/{n}", top, "tolerance_ratio"))
               for s, d in (("catalyst", "f16"), ("catalyst", "bf16"), ("onednn", "bf16"), ("pytorch", "bf16"))}
        f16_ok.append(ratio(c16, c32))
        bf16_ok.append(ratio(cb, ob))
        tol_ok += [err[("catalyst", "f16")][1], err[("catalyst", "bf16")][1]]
        rows.append([n, fmt(c32), fmt(c16), times(ratio(c16, c32)), fmt(cb), fmt(ob), fmt(ob_no_amx), fmt(pb),
                     times(ratio(cb, best_bf16)), times(ratio(cb, ob)), times(ratio(cb, ob_no_amx))])
        lowp_detail.append(f"N={n}: max |error| (tolerance ratio, <= 1 is within): " + ", ".join(
            f"{s} {d} {('%.3g' % e) if e is not None else '-'} ({('%.2f' % r) if r is not None else '-'})"
            for (s, d), (e, r) in err.items()))
        for s, d in (("catalyst", "f16"), ("catalyst", "bf16"), ("pytorch", "bf16"), ("onednn", "bf16")):
            message = sink.error(s, f"matmul/{d}/{n}", top)
            if message:
                lowp_detail.append(f"N={n}: {s} {d}: {message}")
    table(["N", "cat f32", "cat f16", "f16/f32", "cat bf16", "oneDNN bf16", "no AMX", "PyTorch bf16",
           "bf16 vs best", "vs oneDNN", "vs no AMX"], rows)
    no_amx_isa = sink.context.get("onednn_no_amx", {}).get("onednn_isa")
    if no_amx_isa:
        print(f"  oneDNN's ISA: {sink.context.get('onednn', {}).get('onednn_isa')}; "
              f"'no AMX' is oneDNN with ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 (ISA {no_amx_isa})")
    print("\n".join("  " + d for d in lowp_detail) + "\n")
    checks.add(2, "f16 matmul >= 1.5x Catalyst's f32 at every N",
               None if None in f16_ok else all(r >= 1.5 for r in f16_ok),
               ", ".join(f"N={n} {times(r)}" for n, r in zip(a.lowp_sizes, f16_ok)))
    checks.add(2, "bf16 matmul >= 1.0x oneDNN's bf16 at every N",
               None if None in bf16_ok else all(r >= 1.0 for r in bf16_ok),
               ", ".join(f"N={n} {times(r)}" for n, r in zip(a.lowp_sizes, bf16_ok)) +
               f" (oneDNN's ISA {sink.context.get('onednn', {}).get('onednn_isa', '?')})")
    checks.add(2, "f16 and bf16 results within the conformance tolerance",
               None if None in tol_ok else all(r <= 1.0 for r in tol_ok),
               "worst tolerance ratio " + fmt(max((r for r in tol_ok if r is not None), default=None), 2))

    print(f"=== 3. memory-bound kernels, {top} threads ===")
    add_case, shape = f"add/f32/{a.add_elements}", f"{a.norm[0]}x{a.norm[1]}"
    # The machine's bandwidth is the best of the triad's variants (machine_stream_triad.cpp).
    variants = {v: ratio(sink.median("machine", f"stream_triad/{v}/{a.add_elements}/threads:{top}", top,
                                     "bytes_per_second"), 1e9) for v in ("plain", "avx512", "avx512_nt")}
    measured = {v: x for v, x in variants.items() if x is not None}
    best_variant = max(measured, key=measured.get) if measured else None
    triad = measured.get(best_variant)
    cat_add = ratio(sink.median("catalyst", add_case, top, "bytes_per_second"), 1e9)
    torch_add = ratio(sink.median("pytorch", add_case, top, "bytes_per_second"), 1e9)
    rows = [[f"add, {a.add_elements:,} f32 (GB/s, 12 B/element)", fmt(cat_add), fmt(torch_add),
             times(ratio(cat_add, torch_add)), f"STREAM triad {fmt(triad)} GB/s: "
             f"add is {fmt(100 * ratio(cat_add, triad) if triad and cat_add else None)}%"]]
    norm_ratios = []
    for op in ("softmax", "layer_norm"):
        ct = sink.median("catalyst", f"{op}/f32/{shape}", top, "seconds")
        pt = sink.median("pytorch", f"{op}/f32/{shape}", top, "seconds")
        norm_ratios.append((op, ratio(pt, ct)))
        rows.append([f"{op} {shape} f32 (ms)", fmt(ct * 1e3 if ct else None, 2), fmt(pt * 1e3 if pt else None, 2),
                     times(ratio(pt, ct)), "ratio = PyTorch time / Catalyst time"])
    table(["figure", "catalyst", "PyTorch", "catalyst/PyTorch", "note"], rows)
    print("  STREAM triad GB/s by store kind: " + ", ".join(f"{v} {fmt(x)}" for v, x in measured.items()) +
          f"; the best ({best_variant}) is the machine's figure\n")
    share = ratio(cat_add, triad)
    checks.add(3, "add >= 90% of the STREAM triad bandwidth", None if share is None else share >= 0.9,
               f"{fmt(100 * share if share else None)}% ({fmt(cat_add)} of {fmt(triad)} GB/s)")
    checks.add(3, f"softmax and layer_norm {shape} >= 3x PyTorch",
               None if any(r is None for _, r in norm_ratios) else all(r >= 3 for _, r in norm_ratios),
               ", ".join(f"{op} {times(r)}" for op, r in norm_ratios))

    print(f"=== 4. a tiny op through the C ABI (add of 1-element f32 tensors), {top} threads ===")
    run_into = sink.median("catalyst", "op_overhead/run_into_add/1024", top, "seconds_per_call")
    binary = sink.median("catalyst", "op_overhead/binary_add/1024", top, "seconds_per_call")
    torch_call = sink.median("pytorch", "op_overhead/add_out/1024", top, "seconds_per_call")
    us = lambda s: fmt(s * 1e6 if s is not None else None, 3)  # noqa: E731
    table(["call", "us per call", "PyTorch torch.add(out=) us", "PyTorch / call"],
          [["ctl_op_run_into(CTL_OP_ADD), preallocated output", us(run_into), us(torch_call),
            times(ratio(torch_call, run_into))],
           ["ctl_op_binary(CTL_OP_ADD), new tensor each call", us(binary), us(torch_call),
            times(ratio(torch_call, binary))]])
    checks.add(4, "ctl_op_run_into of a tiny add under 0.2 us per call",
               None if run_into is None else run_into < 0.2e-6,
               f"{us(run_into)} us (ctl_op_binary {us(binary)} us, PyTorch {us(torch_call)} us)")

    if not a.no_training:
        print(f"=== 5. training (bench/compare_training.sh), {top} threads ===")
        rows, train_ratios = [], []
        for model, key in (("gpt", "tokens_per_second"), ("mlp", "steps_per_second")):
            c = sink.median("catalyst", f"train/{model}/{key}", top, key)
            p = sink.median("pytorch", f"train/{model}/{key}", top, key)
            train_ratios.append((model, key.replace("_per_second", "/s"), ratio(c, p)))
            rows.append([f"{model} {key.replace('_per_second', '/s')}", fmt(c), fmt(p), times(ratio(c, p))])
        table(["figure", "catalyst", "PyTorch", "catalyst/PyTorch"], rows)
        checks.add(5, "GPT tokens/s and MLP steps/s >= 2x PyTorch",
                   None if any(r is None for *_, r in train_ratios) else all(r >= 2 for *_, r in train_ratios),
                   ", ".join(f"{m} {k} {times(r)}" for m, k, r in train_ratios))
    else:
        checks.add(5, "GPT tokens/s and MLP steps/s >= 2x PyTorch", None, "skipped (--no-training)")

    mixed_precision_report(a, sink, checks)

    levels = {isa: next((r["level"] for r in sink.records if r["case"] == f"conformance/{isa}"), None)
              for isa in ("baseline", "avx2", "avx512")}
    if a.conformance:
        checks.add(6, "conformance at full on every ISA path", all(v == "full" for v in levels.values()),
                   ", ".join(f"{isa}: {v}" for isa, v in levels.items()))
    else:
        checks.add(6, "conformance at full on every ISA path", None, "not run (add --conformance)")
    return checks


def mixed_precision_report(a, sink, checks):
    top = max(a.threads)
    amx = "amx_bf16" in cpu_flags()
    if a.no_training:
        checks.add("26.1", "bf16 GPT tokens/s >= 1.5x our f32 (on an AMX CPU)", None, "skipped (--no-training)")
    else:
        print(f"=== 6. mixed precision: the benchmark GPT trained by catalyst train-gpt --precision P, "
              f"{top} threads, tokens/s ===")
        tps = lambda source, p: sink.median(source, f"mixed/gpt/{p}", top, "tokens_per_second")  # noqa: E731
        c = {p: tps("catalyst", p) for p in PRECISIONS}
        t = {p: tps("pytorch", p) for p in ("f32", "bf16")}
        table(["precision", "catalyst", "vs our f32", "PyTorch", "catalyst/PyTorch"],
              [["f32", fmt(c["f32"]), "1.00x", fmt(t["f32"]), times(ratio(c["f32"], t["f32"]))],
               ["bf16 (PyTorch: autocast)", fmt(c["bf16"]), times(ratio(c["bf16"], c["f32"])), fmt(t["bf16"]),
                times(ratio(c["bf16"], t["bf16"]))],
               ["f16 (loss scaling)", fmt(c["f16"]), times(ratio(c["f16"], c["f32"])), "-", "-"]])
        print(f"  PyTorch: torch_train_bench.py gpt, ATEN_CPU_CAPABILITY={aten_capabilities()[-1] or 'unset'}; "
              f"bf16 is torch.autocast('cpu', dtype=torch.bfloat16). This CPU "
              f"{'has' if amx else 'has no'} AMX; flags: {' '.join(f for f in cpu_flags() if f.startswith(('amx', 'avx512_bf16', 'avx512_fp16', 'avx512f')))}\n")
        speedup = ratio(c["bf16"], c["f32"])
        checks.add("26.1", "bf16 GPT tokens/s >= 1.5x our f32 (the goal on an AMX CPU)",
                   None if speedup is None else speedup >= 1.5,
                   f"{times(speedup)}" + ("" if amx else " (this CPU has no AMX: the goal is not expected here)"))
    demo = {p: sink.median("catalyst", f"demo/{p}", top, "val_loss") for p in ("f32", "bf16")}
    if a.demo_loss:
        gap = abs(demo["bf16"] - demo["f32"]) if None not in demo.values() else None
        checks.add("26.1", "validation loss after the demo's steps: bf16 within 0.03 nats of f32",
                   None if gap is None else gap <= 0.03,
                   f"f32 {fmt(demo['f32'], 3)}, bf16 {fmt(demo['bf16'], 3)}, gap {fmt(gap, 4)}")
    else:
        checks.add("26.1", "validation loss after the demo's steps: bf16 within 0.03 nats of f32", None,
                   "not run (add --demo-loss)")
    wins = sink.context.get("aten_capability_wins", [])
    checks.add("26.4", "PyTorch runs with the better of ATEN_CPU_CAPABILITY unset and avx512",
               bool(wins) if aten_capabilities()[-1] else None,
               f"kernels: unset won {wins.count('default')} cases, avx512 {wins.count('avx512')}; training runs "
               f"with {aten_capabilities()[-1] or 'unset'}" if wins else "no PyTorch kernel figures")


def describe(a, sink):
    with open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    print(f"\nCatalyst CPU comparison, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{'QUICK MODE (smoke test: sizes and timings too small to judge) ' if a.quick else ''}"
          f"median of {a.repeats} run(s), each case at least {a.min_time} s")
    print(f"machine: {model}, {len(os.sched_getaffinity(0))} CPUs, load average now {os.getloadavg()[0]:.1f}")
    c = sink.context
    print("catalyst: " + c.get("catalyst", {}).get("catalyst_device", "?") +
          f"; CATALYST_CPU_ISA={c.get('catalyst', {}).get('CATALYST_CPU_ISA', '?')}")
    if "onednn" in c:
        print(f"oneDNN:   {c['onednn'].get('onednn_version')} (matmul primitive, plain layouts), "
              f"ISA {c['onednn'].get('onednn_isa')}, OpenMP threads from OMP_NUM_THREADS; above 1 thread each\n"
              "          figure is the better of OMP_WAIT_POLICY unset (GNU default) and passive, run by run")
    if "openblas" in c:
        print(f"OpenBLAS: {c['openblas'].get('openblas_config')}, core {c['openblas'].get('openblas_core')} "
              "(OPENBLAS_CORETYPE=SkylakeX)")
    if "pytorch" in c:
        print(f"PyTorch:  {c['pytorch'].get('torch')}, BLAS {', '.join(c['pytorch'].get('blas') or ['(none)'])}, "
              "OMP_WAIT_POLICY=passive; each kernel figure the better of ATEN_CPU_CAPABILITY "
              f"{' and '.join(x or 'unset' for x in aten_capabilities())}")
    print("threads: CATALYST_CPU_THREADS, OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and torch.set_num_threads "
          "all set to the count shown")


def main():
    global LOCK_PATH
    a = parse_args()
    LOCK_PATH = a.lock
    programs, missing = find_programs(a.build)
    required = [k for k in ("catalyst", "machine") + (() if a.no_training else ("train", "train_gpt"))
                + (("train_gpt",) if a.demo_loss else ()) if k not in programs]
    if missing:
        print("compare.py: missing in " + a.build + "; build with:\n" + "\n".join(missing), file=sys.stderr)
    if required:
        return 2
    if subprocess.run([PYTHON, "-c", "import torch"], capture_output=True, check=False).returncode != 0:
        print(f"compare.py: {PYTHON} cannot import torch (Debian: apt-get install python3-torch)", file=sys.stderr)
        return 2
    log = open(a.log, "w") if a.log else None
    sink = Sink(log)
    measure_kernels(a, programs, sink)
    if not a.no_training:
        measure_training(a, programs, sink)
        if "train_gpt" in programs:
            measure_mixed_precision(a, programs, sink)
    if a.demo_loss and "train_gpt" in programs:
        measure_demo_loss(a, programs, sink)
    if a.conformance:
        measure_conformance(a, a.build, sink)
    describe(a, sink)
    checks = report(a, sink, programs)
    checks.print()
    progress(f"done; load average at the end {os.getloadavg()[0]:.1f}")
    if log:
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
