#!/usr/bin/env bash
# demo.sh — the README's first command: set up, build, list the devices Catalyst finds,
# and run ops on the default device.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
source "$ROOT/scripts/setup.sh"

echo; echo "== catalyst devices"
"$BUILD_DIR/bin/catalyst" devices
echo; echo "== examples/basic_ops.c on the default device"
"$BUILD_DIR/bin/basic_ops"
