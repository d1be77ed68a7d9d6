#!/usr/bin/env bash
# conformance_full.sh — every plugin variant of a build through the whole suite at `full`,
# large cases included: what CI's subset leaves out (tests/CMakeLists.txt, "The CI subset").
# About 10 minutes on 2 cores (9 in all on an idle 2-core VM). Reports go to
# BUILD_DIR/conformance-full/.
#
#   scripts/conformance_full.sh [BUILD_DIR]     (default: build)
#
# Exits non-zero when a variant fails a case or misses the full level.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
CLI="$BUILD/bin/catalyst"
PLUGINS="$BUILD/lib/catalyst/plugins"
OUT="$BUILD/conformance-full"
mkdir -p "$OUT"
status=0

# run NAME PLUGIN [ENV=VALUE...] [-- EXTRA SUITE ARGS]
run() {
  local name=$1 plugin=$2
  shift 2
  local env=()
  while [[ $# -gt 0 && $1 != -- ]]; do env+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  if [[ ! -f $plugin ]]; then
    echo "== $name: $plugin was not built; skipped"
    return
  fi
  echo "== $name"
  local start=$SECONDS
  env "${env[@]}" "$CLI" conformance --plugin "$plugin" --level full --jobs 2 --report "$OUT/$name.json" \
    --markdown "$OUT/$name.md" "$@" 2>&1 | tail -n 4
  local rc=${PIPESTATUS[0]}
  echo "   exit status $rc, $((SECONDS - start)) s"
  [[ $rc -eq 0 ]] || status=1
}

run cpu "$PLUGINS/libcatalyst-cpu.so"
run cpu-avx2 "$PLUGINS/libcatalyst-cpu.so" CATALYST_CPU_ISA=avx2
run cpu-baseline "$PLUGINS/libcatalyst-cpu.so" CATALYST_CPU_ISA=baseline
run cpu-split "$PLUGINS/libcatalyst-cpu.so" CATALYST_CPU_DEVICES=2 -- --device 1
run opencl "$PLUGINS/libcatalyst-opencl.so" "CATALYST_CACHE_DIR=$BUILD/kernel-cache"
run vulkan "$PLUGINS/libcatalyst-vulkan.so" "CATALYST_CACHE_DIR=$BUILD/kernel-cache"
# Under VK_LAYER_KHRONOS_validation: the plugin appends one line per message to the log
# (as tests/vulkan/conformance_vulkan.py reads it); no error may appear, and the layer must
# have been active.
validation_log="$OUT/vulkan-validation.log"
rm -f "$validation_log"
run vulkan-validation "$PLUGINS/libcatalyst-vulkan.so" "CATALYST_CACHE_DIR=$BUILD/kernel-cache" \
  CATALYST_VULKAN_VALIDATION=1 "CATALYST_VULKAN_VALIDATION_LOG=$validation_log"
if [[ -f $PLUGINS/libcatalyst-vulkan.so ]]; then
  active=$(grep -c '^active' "$validation_log" 2>/dev/null)
  errors=$(grep -c '^error' "$validation_log" 2>/dev/null)
  echo "   validation layer active in ${active:-0} process(es), ${errors:-0} error(s) ($validation_log)"
  [[ ${active:-0} -gt 0 && ${errors:-0} -eq 0 ]] || status=1
fi
exit $status
