#!/usr/bin/env bash
# setup.sh — installs the Debian packages Catalyst needs (only those missing), then
# configures and builds. Sourced by demo.sh and test.sh; safe to run again.
#   BUILD_DIR   build directory (default: build)
#   SANITIZE    e.g. address,undefined for an instrumented build
#   BUILD_TYPE  CMake build type (default: Release, what users ship and the tests run)
#   CMAKE_ARGS  more arguments for the configure step, e.g. -DBUILD_TESTING=OFF
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}

# Each package is the standard Debian 12 one for its job; see README "Dependencies".
PACKAGES=(
  build-essential cmake ninja-build pkg-config binutils
  libgtest-dev libgmock-dev libcmocka-dev libdlpack-dev
  python3 python3-numpy python3-torch
  fortunes gnuplot-nox
  # train-gpt --dump-graph renders each graph to SVG with Graphviz's dot
  # (gpt_graph_matches_eager parses the SVG).
  graphviz
  ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
  # bench/: Google Benchmark, and the peers bench/compare.py measures Catalyst against.
  # libopenblas0-pthread becomes the system's libblas.so.3, so PyTorch and numpy use it too.
  libbenchmark-dev libdnnl-dev libopenblas-dev libopenblas0-pthread
  # Where matmul's time goes (plugins/cpu/README.md, "Measuring"): perf samples cpu-clock
  # where a VM has no hardware counters; callgrind counts instructions (AVX2 path only).
  linux-perf valgrind
  # scripts/fuzz.sh: Clang and its libFuzzer runtime (clang-14 only recommends the runtime,
  # and recommends are not installed).
  clang libclang-rt-14-dev
  # bindings/go: Go with cgo and the race detector (go test -race).
  golang-go
  # bindings/python: the extension is built with pybind11 against python3's headers; its
  # tests run with pytest.
  pybind11-dev python3-dev python3-pytest
  # core/topology: hwloc reads the host's packages, NUMA nodes and PCI devices; the hwloc
  # package brings lstopo, which checks topology override files (docs/topology.md).
  libhwloc-dev hwloc
  # plugins/mpi: the MPI communication plugin, built on Open MPI; its tests run under mpirun.
  libopenmpi-dev openmpi-bin
  # plugins/vulkan: the Vulkan headers and loader, glslc for its shaders, Mesa's lavapipe as
  # the device, the validation layer vulkan_validation runs under, vulkaninfo.
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers vulkan-tools
)

# bindings/rust: Debian's cargo and rustc 1.63, the oldest compiler the binding promises to
# build with (rust_binding_builds_with_debian_rustc). A newer cargo earlier on the PATH
# (rustup's, say) still runs the binding's tests; Debian's lives in /usr/bin beside it.
PACKAGES+=(cargo rustc)

install_missing_packages() {
  local missing=()
  for package in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "setup: installing missing Debian packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

configure_and_build() {
  # Warnings are errors here, for the project's developers and CI; a plain cmake leaves them
  # warnings for users.
  local args=(-S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}"
              -DCATALYST_WERROR=ON)
  [ -n "${SANITIZE:-}" ] && args+=(-DCATALYST_SANITIZE="$SANITIZE")
  # shellcheck disable=SC2206 # word splitting is the point: several -D arguments
  [ -n "${CMAKE_ARGS:-}" ] && args+=(${CMAKE_ARGS})
  cmake "${args[@]}" >/dev/null
  cmake --build "$BUILD_DIR" -j "$(nproc)"
  # Editors and clang tools look for the compilation database at the top of the tree: the
  # default build's.
  [ "$BUILD_DIR" != "$ROOT/build" ] || ln -sfn "$BUILD_DIR/compile_commands.json" "$ROOT/compile_commands.json"
}

install_missing_packages
configure_and_build
