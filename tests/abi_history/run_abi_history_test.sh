#!/usr/bin/env bash
# run_abi_history_test.sh — today's plugins on the cores of earlier ABI releases.
#
# The other half of tests/older_plugin_test.cpp (an older plugin on today's core): for each
# ABI release, this builds that release commit's core, `catalyst` command and conformance
# suite from the repository's history, then has them load today's plugins. Each plugin must
# be accepted at the release's version (the richest both sides know) and pass the suite's
# `core` level run by that old suite, whose runner links that old core.
#
#   run_abi_history_test.sh SOURCE_DIR WORK_DIR PLUGIN.so...
#
# Exit status 77 (CTest: skipped) when SOURCE_DIR has no git history holding the release
# commits, e.g. a source tarball; in CI (CI=true) or with CATALYST_REQUIRE_ABI_HISTORY=1 that
# is a failure, so a clone without history cannot pass by skipping.
set -euo pipefail
source_dir=$1 work_dir=$2
shift 2
plugins=("$@")
# The old suites predate the runner's own setting: their large cases' host memory on huge
# pages too (conformance/README.md, "Large cases"), which nearly halves their time here.
export GLIBC_TUNABLES=${GLIBC_TUNABLES:-glibc.malloc.hugetlb=1}

# The last commit of each ABI release, before the next version's first change.
releases=(
  "1.0 f0d872d86cc72f8956667beecbc971ac98b043f1"
  "1.1 40fd8e5e70858550bc83c6b245a29d0d01abdc91"
)

skip_or_fail() {
  echo "abi_history: $*" >&2
  if [[ "${CATALYST_REQUIRE_ABI_HISTORY:-0}" == 1 || "${CI:-}" == true ]]; then exit 1; fi
  exit 77
}

command -v git >/dev/null || skip_or_fail "git is not installed"
git -C "$source_dir" rev-parse --git-dir >/dev/null 2>&1 || skip_or_fail "$source_dir is not a git checkout"

for release in "${releases[@]}"; do
  read -r version commit <<<"$release"
  git -C "$source_dir" cat-file -e "$commit^{commit}" 2>/dev/null ||
    skip_or_fail "commit $commit (ABI $version) is not in the history of $source_dir (a shallow clone?)"
  src="$work_dir/$version/src" build="$work_dir/$version/build"
  # A tree already built from this commit is reused: the commit never changes.
  if [[ "$(cat "$work_dir/$version/built" 2>/dev/null)" != "$commit" ]]; then
    echo "== ABI $version: building $commit's core and conformance suite"
    rm -rf "$work_dir/$version"
    mkdir -p "$src"
    git -C "$source_dir" archive "$commit" | tar -x -C "$src"
    # Release: no debug information to compile for a core that is only run.
    cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
      -DCATALYST_WERROR=OFF >"$work_dir/$version/configure.log" 2>&1 ||
      { cat "$work_dir/$version/configure.log"; exit 1; }
    cmake --build "$build" --target catalyst catalyst_cli catalyst-conformance >"$work_dir/$version/build.log" 2>&1 ||
      { tail -n 60 "$work_dir/$version/build.log"; exit 1; }
    echo "$commit" >"$work_dir/$version/built"
  fi

  for plugin in "${plugins[@]}"; do
    name=$(basename "$plugin")
    echo "== ABI $version core loads today's $name"
    listing=$(env -u CATALYST_PLUGINS -u CATALYST_PLUGIN_PATH "$build/bin/catalyst" devices --plugin "$plugin" 2>&1) || true
    if ! grep -Eq "ABI +$version\$" <<<"$listing"; then
      echo "$listing"
      echo "abi_history: the ABI $version core did not accept $name at ABI $version" >&2
      exit 1
    fi
    echo "== ABI $version conformance suite, level core, on today's $name"
    if ! "$build/bin/catalyst-conformance" --plugin "$plugin" --level core --jobs 2 \
        --report "$work_dir/$version/${name%.so}.json"; then
      echo "abi_history: today's $name fails the ABI $version suite's core level" >&2
      exit 1
    fi
  done
done
echo "abi_history: today's plugins load and pass the core level on every earlier ABI release"
