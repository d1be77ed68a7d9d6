#!/usr/bin/env bash
# test.sh — the README's second command: set up, build, and run every test through CTest;
# then rebuild with AddressSanitizer and UndefinedBehaviorSanitizer and run the core and
# plugin tests again; build what users ship once more as Release (warnings are errors in
# every build type); then run the fuzzers for a bounded time (scripts/fuzz.sh). Exits
# non-zero if anything fails.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=$(nproc)
# Each stage's time, so that a CI log shows where its minutes went.
stage_start=$SECONDS
stage_done() { echo "== $1 took $((SECONDS - stage_start)) s ($((SECONDS / 60)) min in all)"; stage_start=$SECONDS; }

echo "== build and test (RelWithDebInfo)"
BUILD_DIR="$ROOT/build" source "$ROOT/scripts/setup.sh"
stage_done "set-up and build"
ctest --test-dir "$ROOT/build" --output-on-failure -j "$JOBS"
stage_done "the tests"

echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
BUILD_DIR="$ROOT/build-asan" SANITIZE=address,undefined source "$ROOT/scripts/setup.sh"
stage_done "the sanitizer build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$ROOT/build-asan" --output-on-failure -j "$JOBS" -L 'core|plugin'
stage_done "the sanitizer tests"

echo "== build as Release (the build type users ship; the tests' own code and the benchmarks are checked above)"
BUILD_DIR="$ROOT/build-release" BUILD_TYPE=Release CMAKE_ARGS="-DBUILD_TESTING=OFF -DCATALYST_BUILD_BENCH=OFF" \
  source "$ROOT/scripts/setup.sh"
stage_done "the Release build"

echo "== fuzz the public C API and the safetensors loader (scripts/fuzz.sh, a minute per harness)"
"$ROOT/scripts/fuzz.sh"
stage_done "fuzzing"
