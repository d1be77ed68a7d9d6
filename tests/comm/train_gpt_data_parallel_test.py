#!/usr/bin/env python3
"""catalyst-train-gpt --data-parallel (run by CTest as train_gpt_data_parallel*).

usage: train_gpt_data_parallel_test.py TRAIN_GPT [MPIRUN]

In one process on two ranks: a run killed after a checkpoint and resumed ends with the same
checkpoint bytes as an uninterrupted one; log.jsonl records the ranks and the seconds each
step waited for communication; --resume with another number of ranks is refused. With
MPIRUN: the same run as 2 MPI processes completes, and rank 0 alone wrote the log.
"""
import json
import os
import subprocess
import sys
import tempfile

train = sys.argv[1]
mpirun = sys.argv[2] if len(sys.argv) > 2 else None
small = ["--steps", "12", "--batch", "4", "--context", "16", "--width", "32", "--heads", "2", "--layers", "1",
         "--eval-every", "6", "--eval-batches", "1", "--checkpoint-every", "6", "--sample-length", "8", "--quiet"]
failures = []


def run(args, launcher=()):
    return subprocess.run([*launcher, train, *small, *args], capture_output=True, text=True, errors="replace", timeout=240)


with tempfile.TemporaryDirectory() as tmp:
    whole, pieces = os.path.join(tmp, "whole"), os.path.join(tmp, "pieces")
    dp = ["--data-parallel", "--devices", "cpu:0,cpu:0"]
    if mpirun:
        done = run(["--out", whole], (mpirun, "--oversubscribe", "-np", "2"))
        if done.returncode != 0:
            failures.append("mpirun -np 2 failed:\n" + done.stdout + done.stderr)
        else:
            records = [json.loads(line) for line in open(os.path.join(whole, "log.jsonl"))]
            if [r["step"] for r in records] != list(range(1, 13)) or any(r["ranks"] != 2 for r in records):
                failures.append("mpirun -np 2: log.jsonl is not one record per step from rank 0 on 2 ranks")
    else:
        done = run(["--out", whole, *dp])
        if done.returncode != 0:
            failures.append("uninterrupted run failed:\n" + done.stderr)
        killed = run(["--out", pieces, *dp, "--kill-after-step", "6"])
        if killed.returncode == 0:
            failures.append("--kill-after-step 6 did not kill the run")
        resumed = run(["--out", pieces, *dp, "--resume"])
        if resumed.returncode != 0:
            failures.append("resume failed:\n" + resumed.stderr)
        elif open(os.path.join(whole, "checkpoint.safetensors"), "rb").read() != open(
                os.path.join(pieces, "checkpoint.safetensors"), "rb").read():
            failures.append("the resumed run's checkpoint differs from the uninterrupted run's")
        records = [json.loads(line) for line in open(os.path.join(whole, "log.jsonl"))]
        if not all(r["ranks"] == 2 and r["comm_wait_seconds"] >= 0 for r in records) or len(records) != 12:
            failures.append("log.jsonl lacks ranks or comm_wait_seconds: %s" % records[:2])
        other = run(["--out", pieces, "--data-parallel", "--devices", "cpu:0,cpu:0,cpu:0,cpu:0", "--resume"])
        if other.returncode == 0 or "written by a run on 2 rank(s), this one has 4" not in other.stderr:
            failures.append("resume on 4 ranks of a 2-rank checkpoint was not refused:\n" + other.stderr)

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("train-gpt data parallel: as expected")
