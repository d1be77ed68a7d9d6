#!/bin/sh
# train_gpt_scaling.sh BUILD_DIR [STEPS] — the GPT's global tokens/s and the communication
# share of step time on 1 rank, 2 MPI ranks and 2 in-process ranks (plugins/mpi/README.md).
# Each run's log.jsonl gives the numbers; the first 5 steps (warm-up) are left out.
set -eu
build=${1:?usage: train_gpt_scaling.sh BUILD_DIR [STEPS]}
steps=${2:-40}
train="$build/bin/catalyst-train-gpt"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
common="--steps $steps --eval-every 100000 --checkpoint-every 100000 --sample-length 1 --quiet"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$train" $common --out "$out/one" >/dev/null 2>&1
mpirun --oversubscribe -np 2 "$train" $common --out "$out/mpi2" >/dev/null 2>&1
"$train" $common --data-parallel --devices cpu:0,cpu:0 --out "$out/inproc2" >/dev/null 2>&1
for run in one mpi2 inproc2; do
  python3 - "$out/$run/log.jsonl" "$run" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
steady = records[5:]
seconds = sum(r["step_seconds"] for r in steady)
waited = sum(r.get("comm_wait_seconds", 0) for r in steady)
tokens = 16 * 64 * len(steady)  # the default --batch 16 and --context 64
print("%-8s ranks %d  %6.0f tokens/s  communication %4.1f%% of step time  loss %.3f" %
      (sys.argv[2], records[-1].get("ranks", 1), tokens / seconds, 100 * waited / seconds, records[-1]["loss"]))
PY
done
