#!/usr/bin/env bash
# fresh_machine.sh — runs .ci/run (the README's test command) as a fresh Debian 12 machine
# would: in a chroot that debootstrap builds from Debian's packages, holding a minimal Debian
# and a clean clone of this repository's HEAD, nothing else. scripts/setup.sh installs the
# rest there, as on a new machine, so a program a test needs that setup.sh does not install
# fails here as it would there (a green CI on a developer's machine once hid a missing
# Graphviz this way).
#
#   sudo scripts/fresh_machine.sh [--new] [DIR]
#
# DIR (default /var/tmp/catalyst-fresh) holds the chroot. It is kept between runs to save
# the debootstrap (about a minute and 100 MB); the packages setup.sh installed into it are
# removed first, so every run starts from the minimal system again. --new builds it anew.
# Needs root (debootstrap, chroot, mounts) and Debian's mirror. Exits with .ci/run's status
# and prints how long it took.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

new=0
if [ "${1:-}" = "--new" ]; then
  new=1
  shift
fi
DIR=${1:-/var/tmp/catalyst-fresh}
[ "$(id -u)" -eq 0 ] || { echo "fresh_machine: needs root (debootstrap, chroot and mounts)" >&2; exit 1; }
command -v debootstrap >/dev/null || {
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap
}

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT

# The minimal system: debootstrap's minbase, plus git and the certificates a clone needs.
# Its package list is kept, so a later run can remove whatever setup.sh added.
if [ "$new" -eq 1 ] || [ ! -f "$DIR/var/lib/catalyst-fresh-base" ]; then
  rm -rf "$DIR"
  mkdir -p "$DIR"
  echo "fresh_machine: debootstrap bookworm into $DIR"
  debootstrap --variant=minbase --include=git,ca-certificates bookworm "$DIR" http://deb.debian.org/debian >/dev/null
  chroot "$DIR" dpkg-query -W -f='${Package}\n' | sort >"$DIR/var/lib/catalyst-fresh-base"
fi

for m in proc sys dev dev/pts; do
  mkdir -p "$DIR/$m"
  mount --bind "/$m" "$DIR/$m"
  mounted+=("$DIR/$m")
done
mkdir -p "$DIR/dev/shm"  # Open MPI's shared memory lives here
mount -t tmpfs tmpfs "$DIR/dev/shm"
mounted+=("$DIR/dev/shm")
cp /etc/resolv.conf "$DIR/etc/resolv.conf"

# Back to the minimal system: remove every package that was not in it.
extra=$(chroot "$DIR" dpkg-query -W -f='${Package}\n' | sort | comm -13 "$DIR/var/lib/catalyst-fresh-base" -)
if [ -n "$extra" ]; then
  echo "fresh_machine: removing $(echo "$extra" | wc -l) package(s) an earlier run installed"
  # shellcheck disable=SC2086 # one package per word
  chroot "$DIR" env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $extra >/dev/null
fi

# A clean clone of HEAD (what CI gets), with shared/ beside it as CI has it.
rm -rf "$DIR/work"
mkdir -p "$DIR/work"
git clone -q --no-local "$ROOT" "$DIR/work/main"
[ -d "$ROOT/../shared" ] && cp -r "$ROOT/../shared" "$DIR/work/shared"
echo "fresh_machine: running .ci/run on a clean clone of $(git -C "$ROOT" rev-parse --short HEAD) in $DIR"

start=$(date +%s)
status=0
chroot "$DIR" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  LANG=C.UTF-8 CI=true bash -c 'cd /work/main && bash .ci/run' </dev/null || status=$?
elapsed=$(($(date +%s) - start))
printf 'fresh_machine: .ci/run exited %d after %dm%02ds\n' "$status" $((elapsed / 60)) $((elapsed % 60))
exit "$status"
