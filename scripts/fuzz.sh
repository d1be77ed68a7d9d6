#!/usr/bin/env bash
# fuzz.sh — builds the libFuzzer harnesses of tests/fuzz/ (Clang; the core and the CPU
# plugin with AddressSanitizer, UBSan and coverage) and runs each for a bounded time, two at
# a time. Exits non-zero on any finding (a crash, a sanitizer report, a broken promise, a
# leak or a timeout); the input that caused it is kept in $FUZZ_BUILD_DIR/findings/. Prints
# inputs executed and coverage per harness. Needs the packages of scripts/setup.sh (clang
# and libclang-rt-14-dev among them).
#   FUZZ_SECONDS    seconds per harness (default 60)
#   FUZZ_HARNESSES  which to run (default: views ops dlpack safetensors)
#   FUZZ_JOBS       harnesses run at once (default 2)
#   FUZZ_BUILD_DIR  build directory (default: build-fuzz beside the source)
# To replay a finding: LD_PRELOAD=$(clang++ --print-runtime-dir)/libclang_rt.asan-x86_64.so \
#   $FUZZ_BUILD_DIR/bin/fuzz_<harness> <file>
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
HARNESSES=(${FUZZ_HARNESSES:-views ops dlpack safetensors})
JOBS=${FUZZ_JOBS:-2}

CC=${FUZZ_CC:-clang}
CXX=${FUZZ_CXX:-clang++}
command -v "$CXX" >/dev/null || { echo "fuzz: $CXX not found; run scripts/setup.sh" >&2; exit 1; }
# libFuzzer with the sanitizers' shared runtime: libcatalyst.so links with --no-undefined,
# which a static runtime (Clang's default) cannot satisfy for a shared library.
RUNTIME_DIR=$("$CXX" --print-runtime-dir)
[ -f "$RUNTIME_DIR/libclang_rt.fuzzer-x86_64.a" ] || {
  echo "fuzz: no libFuzzer in $RUNTIME_DIR; install libclang-rt-14-dev (scripts/setup.sh)" >&2
  exit 1
}
LINK="-shared-libsan -Wl,-rpath,$RUNTIME_DIR"

targets=()
for h in "${HARNESSES[@]}"; do targets+=("fuzz_$h"); done
echo "fuzz: building ${targets[*]} in $BUILD_DIR"
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCATALYST_SANITIZE=address,undefined -DCATALYST_BUILD_FUZZERS=ON -DCATALYST_WERROR=ON \
  -DCATALYST_WITH_OPENCL=OFF -DCATALYST_BUILD_EXAMPLES=OFF -DCATALYST_BUILD_BENCH=OFF \
  -DCMAKE_C_FLAGS="-fsanitize=fuzzer-no-link" -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" \
  -DCMAKE_EXE_LINKER_FLAGS="$LINK" -DCMAKE_SHARED_LINKER_FLAGS="$LINK" -DCMAKE_MODULE_LINKER_FLAGS="$LINK" \
  -DCATALYST_FUZZ_CPU_PLUGIN= >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target "${targets[@]}"

# Allocations past 256 MiB fail (NULL from malloc) instead of being made: the core must
# report OUT_OF_MEMORY for them, and iterations stay small. One CPU thread: tiny tensors
# never split, and a single thread keeps every run reproducible.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:max_allocation_size_mb=256:detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export CATALYST_CPU_THREADS=1
# The sanitizer runtime must come first among the libraries; libFuzzer's link puts
# libstdc++ before it, so preload it (only for the harnesses).
PRELOAD="$RUNTIME_DIR/libclang_rt.asan-x86_64.so"

WORK="$BUILD_DIR/fuzz-work"
FINDINGS="$BUILD_DIR/findings"
mkdir -p "$WORK" "$FINDINGS"

run_one() {
  local h=$1
  local corpus="$WORK/corpus/$h"
  mkdir -p "$corpus"
  # New inputs go to the work corpus; the committed seeds are read, never written.
  LD_PRELOAD="$PRELOAD" "$BUILD_DIR/bin/fuzz_$h" -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$FINDINGS/$h-" "$corpus" "$ROOT/tests/fuzz/corpus/$h" \
    >"$WORK/$h.log" 2>&1
}

echo "fuzz: running ${HARNESSES[*]} for ${SECONDS_EACH}s each, $JOBS at a time"
declare -A status
pids=()
names=()
for h in "${HARNESSES[@]}"; do
  run_one "$h" &
  pids+=($!)
  names+=("$h")
  if [ ${#pids[@]} -ge "$JOBS" ]; then
    wait "${pids[0]}" && status[${names[0]}]=0 || status[${names[0]}]=$?
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
  fi
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" && status[${names[$i]}]=0 || status[${names[$i]}]=$?
done

failed=0
printf '%-12s %12s %8s %8s  %s\n' harness inputs cov ft result
for h in "${HARNESSES[@]}"; do
  log="$WORK/$h.log"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  if [ "${status[$h]}" -eq 0 ]; then
    result=ok
  else
    result="FINDING (exit ${status[$h]}): see $log and $FINDINGS/$h-*"
    failed=1
  fi
  printf '%-12s %12s %8s %8s  %s\n' "$h" "${runs:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
if [ "$failed" -ne 0 ]; then
  for h in "${HARNESSES[@]}"; do
    [ "${status[$h]}" -eq 0 ] || { echo "---- $h (last 60 lines)"; tail -60 "$WORK/$h.log"; }
  done
  exit 1
fi
