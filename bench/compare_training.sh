#!/bin/sh
# compare_training.sh — training throughput of Catalyst against PyTorch on the same two
# models (an MLP and a small GPT), in one run. Builds nothing: it runs the
# catalyst-train-bench of an existing build and bench/torch_train_bench.py.
#
#   bench/compare_training.sh [BUILD_DIR]       (default ./build)
#
# Each model is measured REPEATS times, alternating Catalyst and PyTorch so both see the
# same drift in machine load; each run reports its median step time, and the table shows
# the median of those. Environment:
#   BENCH_REPEATS      runs of each framework per model (default 3)
#   BENCH_MLP_STEPS    timed MLP steps per run (default 100), BENCH_MLP_WARMUP (default 10)
#   BENCH_GPT_STEPS    timed GPT steps per run (default 10), BENCH_GPT_WARMUP (default 3)
#   BENCH_MODELS       which models (default "mlp gpt")
#   BENCH_DEVICE       Catalyst device spec (default: the default device)
#   PYTHON             the interpreter with torch (default /usr/bin/python3)
#   TORCH_BLAS_DIR     a folder with a libblas.so.3 for PyTorch to load first (LD_LIBRARY_PATH
#                      for the PyTorch runs only). Default: Debian's OpenBLAS
#                      (/usr/lib/x86_64-linux-gnu/openblas-pthread, from libopenblas0-pthread)
#                      when it is installed, so the peer is not the slow reference BLAS.
#   BENCH_LOG          also keep every JSON line in this file
set -eu

build=${1:-./build}
here=$(cd "$(dirname "$0")" && pwd)
bench="$build/bin/catalyst-train-bench"
python=${PYTHON:-/usr/bin/python3}
repeats=${BENCH_REPEATS:-3}
models=${BENCH_MODELS:-mlp gpt}

if [ ! -x "$bench" ]; then
  echo "compare_training.sh: no $bench; build it first:" >&2
  echo "  cmake -S . -B $build && cmake --build $build --target catalyst-train-bench" >&2
  exit 2
fi
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "compare_training.sh: $python cannot import torch (Debian: apt-get install python3-torch)" >&2
  exit 2
fi

if [ -z "${TORCH_BLAS_DIR+set}" ] && [ -e /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ]; then
  TORCH_BLAS_DIR=/usr/lib/x86_64-linux-gnu/openblas-pthread
fi

lines=$(mktemp)
trap 'rm -f "$lines"' EXIT

torch_run() {
  # PyTorch as it is usually run on a small VM: OpenMP threads that sleep when idle, and
  # OpenBLAS told the core type its CPUID detection misses in this VM (AVX-512).
  if [ -n "${TORCH_BLAS_DIR:-}" ]; then
    env OMP_WAIT_POLICY=passive OPENBLAS_CORETYPE=SkylakeX \
      LD_LIBRARY_PATH="$TORCH_BLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$python" "$here/torch_train_bench.py" "$@"
  else
    env OMP_WAIT_POLICY=passive OPENBLAS_CORETYPE=SkylakeX "$python" "$here/torch_train_bench.py" "$@"
  fi
}

catalyst_run() {
  if [ -n "${BENCH_DEVICE:-}" ]; then
    "$bench" "$@" --device "$BENCH_DEVICE"
  else
    "$bench" "$@"
  fi
}

for model in $models; do
  case $model in
    mlp) steps=${BENCH_MLP_STEPS:-100} warmup=${BENCH_MLP_WARMUP:-10} ;;
    gpt) steps=${BENCH_GPT_STEPS:-10} warmup=${BENCH_GPT_WARMUP:-3} ;;
    *) echo "compare_training.sh: unknown model '$model' (mlp, gpt)" >&2; exit 2 ;;
  esac
  i=1
  while [ "$i" -le "$repeats" ]; do
    echo "[$model $i/$repeats] catalyst ($steps steps after $warmup warm-up)" >&2
    out=$(catalyst_run "$model" --steps "$steps" --warmup "$warmup")
    printf '%s\n' "$out" | tail -n 1 >>"$lines"
    echo "[$model $i/$repeats] pytorch  ($steps steps after $warmup warm-up)" >&2
    out=$(torch_run "$model" --steps "$steps" --warmup "$warmup")
    printf '%s\n' "$out" | tail -n 1 >>"$lines"
    i=$((i + 1))
  done
done
if [ -n "${BENCH_LOG:-}" ]; then cp "$lines" "$BENCH_LOG"; fi

"$python" - "$lines" <<'PY'
import json
import statistics
import sys

runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]


def pick(model, framework, key):
    return [r[key] for r in runs if r["model"] == model and r["framework"] == framework and key in r]


def fmt(v):
    return "-" if v is None else f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


header = ["model", "catalyst steps/s", "pytorch steps/s", "catalyst/pytorch", "catalyst tokens/s", "pytorch tokens/s"]
rows, details = [], []
for model in dict.fromkeys(r["model"] for r in runs):
    c, t = pick(model, "catalyst", "steps_per_second"), pick(model, "pytorch", "steps_per_second")
    cs, ts = statistics.median(c), statistics.median(t)
    ctok, ttok = pick(model, "catalyst", "tokens_per_second"), pick(model, "pytorch", "tokens_per_second")
    rows.append([model, fmt(cs), fmt(ts), f"{cs / ts:.2f}x",
                 fmt(statistics.median(ctok)) if ctok else "-", fmt(statistics.median(ttok)) if ttok else "-"])
    details.append(f"{model} steps/s of each run: catalyst {', '.join(map(fmt, c))}; pytorch {', '.join(map(fmt, t))}")

first = {r["framework"]: r for r in runs}
print(f"catalyst: {first['catalyst']['plugin']} device \"{first['catalyst']['device']}\"")
blas = first["pytorch"].get("blas") or ["(none found)"]
print(f"pytorch:  {first['pytorch']['device']}, BLAS {', '.join(blas)}")
if any("/blas/libblas.so" in b for b in blas):
    print("warning:  PyTorch runs on the netlib reference BLAS (Debian's libblas3), which is many times\n"
          "          slower than OpenBLAS or MKL: its figures understate PyTorch. See bench/README.md\n"
          "          (TORCH_BLAS_DIR) for a baseline over OpenBLAS.")
print(f"median of {len(pick(rows[0][0], 'catalyst', 'steps_per_second'))} runs each, alternating; "
      "catalyst/pytorch above 1 means Catalyst is faster\n")
widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
for row in [header] + rows:
    print("  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w) for i, (x, w) in enumerate(zip(row, widths))))
print()
print("\n".join(details))
PY
