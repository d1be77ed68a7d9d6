#!/usr/bin/env bash
# demo.sh — the README's first command: set up, build, list the devices Catalyst finds,
# run ops on the default device, then train a byte-level GPT from scratch on Debian's
# fortunes and print what it writes.
#   GPT_STEPS   training steps (default: the trainer's, 1200; under two minutes on 2 cores)
#   GPT_DEVICE  a device spec for --device (default: the default device)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
source "$ROOT/scripts/setup.sh"

echo; echo "== catalyst devices"
"$BUILD_DIR/bin/catalyst" devices
echo; echo "== examples/basic_ops.c on the default device"
"$BUILD_DIR/bin/basic_ops"
echo; echo "== catalyst train-gpt: a GPT learns to write fortunes (output in $BUILD_DIR/gpt-run)"
gpt_args=(--out "$BUILD_DIR/gpt-run")
if [[ -n "${GPT_STEPS:-}" ]]; then gpt_args+=(--steps "$GPT_STEPS"); fi
if [[ -n "${GPT_DEVICE:-}" ]]; then gpt_args+=(--device "$GPT_DEVICE"); fi
"$BUILD_DIR/bin/catalyst" train-gpt "${gpt_args[@]}"
