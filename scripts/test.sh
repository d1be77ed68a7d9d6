#!/usr/bin/env bash
# test.sh — the README's second command: set up, build as Release (what users ship), and
# run every test through CTest; then rebuild with AddressSanitizer and
# UndefinedBehaviorSanitizer (at -O1, with debug information) and run the core and plugin
# tests again; then run the fuzzers for a bounded time (scripts/fuzz.sh). Warnings are
# errors in every build. Exits non-zero if anything fails.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=$(nproc)
# Each stage's time, so that a CI log shows where its minutes went.
stage_start=$SECONDS
stage_done() { echo "== $1 took $((SECONDS - stage_start)) s ($((SECONDS / 60)) min in all)"; stage_start=$SECONDS; }

echo "== build and test (Release)"
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

echo "== fuzz the public C API and the safetensors loader (scripts/fuzz.sh, a minute per harness)"
"$ROOT/scripts/fuzz.sh"
stage_done "fuzzing"
