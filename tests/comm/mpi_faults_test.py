#!/usr/bin/env python3
"""Faults of the MPI communication plugin under mpirun (run by CTest as mpi_faults).

usage: mpi_faults_test.py MPIRUN MPI_COMM_TEST

Each case runs mpi_comm_test in a fault mode with a 300 ms timeout on every call and
checks what every surviving rank said. A case that does not end within 60 s is a hang and
fails the test.
"""
import re
import subprocess
import sys

mpirun, program = sys.argv[1], sys.argv[2]
failures = []


def run(mode, ranks, *extra):
    command = [mpirun, "--oversubscribe", *extra, "-np", str(ranks), program, mode]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        failures.append(f"{mode}: mpirun did not end within 60 s (a hang)")
        return None, ""
    return done.returncode, done.stdout + done.stderr


def said(output, rank):
    match = re.search(rf"^rank {rank}: (no error|expected error): (.*)$", output, re.M)
    return match.group(2) if match else None


def expect(case, condition, output):
    if not condition:
        failures.append(f"{case}:\n{output}")


# A rank that never calls: every other rank reports the timeout, naming the call.
_, out = run("stuck", 3)
for r in (0, 1):
    message = said(out, r)
    expect(f"stuck, rank {r}", message and message.startswith("DEVICE_LOST:") and "allreduce #1" in message
           and "300 ms (the timeout)" in message, out)

# Mismatched collectives: every rank names both calls.
for ranks in (2, 3):
    _, out = run("mismatch", ranks)
    for r in range(ranks):
        message = said(out, r)
        expect(f"mismatch on {ranks} ranks, rank {r}", message and message.startswith(
            "FAILED_PRECONDITION:") and "rank 0 called allreduce #1 (f32, 1000 elements, sum), rank 1 called "
            "broadcast #1 (f32, 1000 elements, root 0)" in message, out)

# A killed rank, with mpirun told to keep the job going (--enable-recovery): the survivors'
# own deadline turns the dead peer into DEVICE_LOST.
_, out = run("kill", 3, "--enable-recovery")
for r in (0, 1):
    message = said(out, r)
    expect(f"kill with --enable-recovery, rank {r}",
           message and message.startswith("DEVICE_LOST:") and "allreduce #1" in message, out)

# A killed rank under mpirun's default: mpirun ends the whole job, naming the dead rank; no
# survivor may report success.
code, out = run("kill", 3)
expect("kill (default)", code != 0 and "exited on signal 9" in out and "no error" not in out, out)

if failures:
    print("\n\n".join(failures))
    sys.exit(1)
print("mpi faults: all cases as expected")
