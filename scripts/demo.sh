#!/usr/bin/env bash
# demo.sh — the README's first command: set up, build, list the devices Catalyst finds,
# run ops on the default device, then train a byte-level GPT from scratch on Debian's
# fortunes and print what it writes, the validation loss beside the unigram baseline and
# the time each phase took.
#   GPT_STEPS      training steps (default: the trainer's; about three minutes on 2 cores)
#   GPT_DEVICE     a device spec for --device (default: the default device)
#   GPT_PRECISION  --precision f32, bf16 or f16 (default f32: with AVX512-BF16 but no AMX,
#                  bf16 steps are only about 1.1x faster, which its own loss gap takes
#                  back; see the README)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}

phases=()
phase_start=$(date +%s.%N)
phase_done() {  # records how long the phase named $1 took
  local now
  now=$(date +%s.%N)
  phases+=("$1 $(awk -v a="$phase_start" -v b="$now" 'BEGIN { printf "%.1fs", b - a }')")
  phase_start=$now
}

source "$ROOT/scripts/setup.sh"
phase_done "setup and build:"

echo; echo "== catalyst devices"
"$BUILD_DIR/bin/catalyst" devices
echo; echo "== examples/basic_ops.c on the default device"
"$BUILD_DIR/bin/basic_ops"
phase_done "devices and ops:"
echo; echo "== catalyst train-gpt: a GPT learns to write fortunes (output in $BUILD_DIR/gpt-run)"
gpt_args=(--out "$BUILD_DIR/gpt-run" --precision "${GPT_PRECISION:-f32}")
if [[ -n "${GPT_STEPS:-}" ]]; then gpt_args+=(--steps "$GPT_STEPS"); fi
if [[ -n "${GPT_DEVICE:-}" ]]; then gpt_args+=(--device "$GPT_DEVICE"); fi
"$BUILD_DIR/bin/catalyst" train-gpt "${gpt_args[@]}"
phase_done "train-gpt:"
echo; echo "== time per phase: ${phases[*]}"
