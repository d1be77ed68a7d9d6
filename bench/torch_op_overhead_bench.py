"""torch_op_overhead_bench.py — PyTorch's side of catalyst-op-overhead-bench (bench/op_overhead_bench.c).

Times torch.add(a, b, out=c) and torch.add(a, b) on two 1-element f32 CPU tensors, N
back-to-back calls per repeat, and prints one JSON line with the medians in nanoseconds
per call, wall clock and this thread's CPU time, under the same names as the C benchmark.
"""
import argparse
import json
import statistics
import time

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    torch.set_num_threads(1)
    a = torch.ones(1)
    b = torch.full((1,), 2.0)
    c = torch.empty(1)
    add = torch.add
    for _ in range(1000):
        add(a, b, out=c)
    into, binary, into_cpu, binary_cpu = [], [], [], []
    for _ in range(args.repeats):
        start, start_cpu = time.perf_counter(), time.thread_time()
        for _ in range(args.calls):
            add(a, b, out=c)
        into.append((time.perf_counter() - start) * 1e9 / args.calls)
        into_cpu.append((time.thread_time() - start_cpu) * 1e9 / args.calls)
        start, start_cpu = time.perf_counter(), time.thread_time()
        for _ in range(args.calls):
            add(a, b)
        binary.append((time.perf_counter() - start) * 1e9 / args.calls)
        binary_cpu.append((time.thread_time() - start_cpu) * 1e9 / args.calls)
    assert c.item() == 3.0
    print(json.dumps({
        "framework": "pytorch", "version": torch.__version__, "op": "add", "elements": 1,
        "calls": args.calls, "repeats": args.repeats,
        "run_into_ns_per_call": round(statistics.median(into), 1),
        "binary_ns_per_call": round(statistics.median(binary), 1),
        "run_into_cpu_ns_per_call": round(statistics.median(into_cpu), 1),
        "binary_cpu_ns_per_call": round(statistics.median(binary_cpu), 1),
    }))


if __name__ == "__main__":
    main()
