#!/usr/bin/env bash
# test.sh — the README's second command: set up, build, and run every test through CTest;
# then rebuild with AddressSanitizer and UndefinedBehaviorSanitizer and run the core and
# plugin tests again; then build everything once more as Release (warnings are errors in
# every build type). Exits non-zero if anything fails.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=$(nproc)

echo "== build and test (RelWithDebInfo)"
BUILD_DIR="$ROOT/build" source "$ROOT/scripts/setup.sh"
ctest --test-dir "$ROOT/build" --output-on-failure -j "$JOBS"

echo "== build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
BUILD_DIR="$ROOT/build-asan" SANITIZE=address,undefined source "$ROOT/scripts/setup.sh"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir "$ROOT/build-asan" --output-on-failure -j "$JOBS" -L 'core|plugin'

echo "== build as Release (the build type users ship)"
BUILD_DIR="$ROOT/build-release" BUILD_TYPE=Release source "$ROOT/scripts/setup.sh"
