#!/bin/sh
# compare_matmul.sh — f32 matmul GFLOP/s of Catalyst's devices beside PyTorch's, in one run.
# Builds nothing: it runs catalyst-matmul-bench of an existing build and
# bench/torch_matmul_bench.py (on the CPU, and on CUDA when torch has a GPU), REPEATS times,
# alternating, and prints the median of each figure with its ratio to the best PyTorch one.
#
#   bench/compare_matmul.sh [BUILD_DIR]        (default ./build)
#
# Environment:
#   BENCH_DEVICES   Catalyst devices (default cpu,opencl,vulkan; on a GPU machine e.g. cpu,opencl:1,vulkan:1)
#   BENCH_SIZES     default 256,1024,2048
#   BENCH_REPEATS   runs of each side (default 3); each run is itself a median of 5 products
#   PYTHON          the interpreter with torch (default /usr/bin/python3)
#   TORCH_BLAS_DIR  as in compare_training.sh (default: Debian's OpenBLAS when installed)
set -eu

build=${1:-./build}
here=$(cd "$(dirname "$0")" && pwd)
bench="$build/bin/catalyst-matmul-bench"
python=${PYTHON:-/usr/bin/python3}
devices=${BENCH_DEVICES:-cpu,opencl,vulkan}
sizes=${BENCH_SIZES:-256,1024,2048}
repeats=${BENCH_REPEATS:-3}

if [ ! -x "$bench" ]; then
  echo "compare_matmul.sh: no $bench; build it first (cmake --build $build --target catalyst-matmul-bench)" >&2
  exit 2
fi
if ! "$python" -c 'import torch' 2>/dev/null; then
  echo "compare_matmul.sh: $python cannot import torch (Debian: apt-get install python3-torch)" >&2
  exit 2
fi
if [ -z "${TORCH_BLAS_DIR+set}" ] && [ -e /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3 ]; then
  TORCH_BLAS_DIR=/usr/lib/x86_64-linux-gnu/openblas-pthread
fi
torch_devices=cpu
if "$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  torch_devices="cpu cuda"
fi

lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
torch_run() {
  # Sleeping OpenMP threads and the core type OpenBLAS misdetects in this VM: the peer's
  # best settings (see README.md).
  env OMP_WAIT_POLICY=passive OPENBLAS_CORETYPE=SkylakeX \
    ${TORCH_BLAS_DIR:+LD_LIBRARY_PATH="$TORCH_BLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"} \
    "$python" "$here/torch_matmul_bench.py" "$@"
}

i=1
while [ "$i" -le "$repeats" ]; do
  echo "run $i of $repeats: catalyst ($devices), torch ($torch_devices)" >&2
  "$bench" --devices "$devices" --sizes "$sizes" --json >> "$lines"
  for d in $torch_devices; do torch_run --device "$d" --sizes "$sizes" >> "$lines"; done
  i=$((i + 1))
done

"$python" - "$lines" <<'PY'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
names = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[(r["device"], r["n"])].append(r["gflops"])
    names[r["device"]] = r["name"]
devices = list(dict.fromkeys(d for d, _ in runs))
sizes = sorted({n for _, n in runs})
median = {k: statistics.median(v) for k, v in runs.items()}
print("f32 matmul GFLOP/s, median of runs; ratio = device / best torch figure at that size")
for d in devices:
    print(f"  {d:<12} {names[d]}")
print(f"{'N':>6} " + " ".join(f"{d:>12}" for d in devices) + "   ratios to best torch")
for n in sizes:
    best = max((median[(d, n)] for d in devices if d.startswith("torch-") and (d, n) in median), default=None)
    cells = " ".join(f"{median.get((d, n), float('nan')):12.1f}" for d in devices)
    ratios = "  ".join(f"{d} {median[(d, n)] / best:.2f}x" for d in devices
                       if not d.startswith("torch-") and (d, n) in median and best)
    print(f"{n:>6} {cells}   {ratios}")
PY
