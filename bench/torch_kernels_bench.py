#!/usr/bin/python3
"""torch_kernels_bench.py — the PyTorch peer of catalyst-kernels-bench: the same cases, under
the same names, one JSON line each, for bench/compare.py.

usage: torch_kernels_bench.py [--threads T] [--min-time S] [--sizes 128,...] [--lowp-sizes 1024,...]
                              [--add-elements N] [--norm-rows R] [--norm-cols C] [--cases PREFIX,...]

  matmul/f32/N              torch.mm(a, b, out=c), N x N by N x N
  matmul/bf16/N             the same in bfloat16, with max_abs_error and tolerance_ratio as
                            bench/matmul_accuracy.hpp computes them (16 sampled rows)
  add/f32/N                 torch.add(a, b, out=c) over N elements; bytes_per_second counts 12 N
  softmax/f32/RxC           torch.softmax(x, -1)
  layer_norm/f32/RxC        F.layer_norm(x, (C,), weight, bias)
  op_overhead/add_out/1024  1024 calls of torch.add(a, b, out=c) on 1-element tensors

Each case runs once untimed, then as many times as fit in --min-time seconds (at least once),
as Google Benchmark does; "seconds" is the mean time of one iteration. torch.set_num_threads
is --threads (the comparison script also sets OMP_NUM_THREADS). The first line describes the
process: torch version, threads, and the BLAS library it loaded.
"""
import argparse
import json
import math
import os
import time

import torch
import torch.nn.functional as F


def loaded_blas():
    """The BLAS libraries this process has mapped (torch's f32 matrix products run there)."""
    found = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            path = fields[-1] if len(fields) >= 6 else ""
            if any(k in os.path.basename(path) for k in ("blas", "mkl", "blis")) and path not in found:
                found.append(path)
    return found


def timed(fn, min_time):
    """Mean seconds of one fn() call, after one untimed call, over at least min_time seconds."""
    fn()
    iterations, start = 0, time.perf_counter()
    while True:
        fn()
        iterations += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / iterations, iterations


def uniform(shape, generator, dtype=torch.float32):
    return (torch.rand(*shape, generator=generator) * 2 - 1).to(dtype)


def matmul_error(a, b, c, unit_roundoff, sample_rows=16):
    """The largest |c - exact| and |c - exact| / bound over sampled rows (matmul_accuracy.hpp)."""
    m, k = a.shape
    rows = torch.linspace(0, m - 1, min(sample_rows, m)).round().long()
    a_rows = a[rows].double()
    exact = a_rows @ b.double()
    scale = a_rows.abs() @ b.double().abs()
    error = (c[rows].double() - exact).abs()
    bound = (k + 2) * 2.0 ** -24 * scale + 2 * unit_roundoff * exact.abs()
    ratio = torch.where(bound > 0, error / bound, torch.where(error > 0, math.inf, 0.0))
    if torch.isnan(error).any():
        ratio = torch.full_like(ratio, math.inf)
    return error.max().item(), ratio.max().item()


def cases(args):
    """(name, setup) pairs; setup() returns the timed function and the case's extra figures."""
    g = torch.Generator().manual_seed(1)

    def matmul(n, dtype):
        def setup():
            a, b = uniform((n, n), g, dtype), uniform((n, n), g, dtype)
            c = torch.empty(n, n, dtype=dtype)
            extra = {"flops": 2.0 * n ** 3}
            return (lambda: torch.mm(a, b, out=c)), extra, (a, b, c)
        return setup

    def add(n):
        def setup():
            a, b, c = uniform((n,), g), uniform((n,), g), torch.zeros(n)
            return (lambda: torch.add(a, b, out=c)), {"bytes": 12.0 * n}, None
        return setup

    def softmax(r, c):
        def setup():
            x = uniform((r, c), g) * 4
            return (lambda: torch.softmax(x, -1)), {}, None
        return setup

    def layer_norm(r, c):
        def setup():
            x, w, b = uniform((r, c), g) * 4, uniform((c,), g) * 0.5 + 1, uniform((c,), g) * 0.5
            return (lambda: F.layer_norm(x, (c,), w, b)), {}, None
        return setup

    def add_out_calls(calls):
        def setup():
            a, b, c = torch.ones(1), torch.full((1,), 2.0), torch.empty(1)

            def run():
                for _ in range(calls):
                    torch.add(a, b, out=c)
            return run, {"calls": calls}, None
        return setup

    shape = f"{args.norm_rows}x{args.norm_cols}"
    for n in args.sizes:
        yield f"matmul/f32/{n}", matmul(n, torch.float32), None
    for n in args.lowp_sizes:
        yield f"matmul/bf16/{n}", matmul(n, torch.bfloat16), 2.0 ** -8
    yield f"add/f32/{args.add_elements}", add(args.add_elements), None
    yield f"softmax/f32/{shape}", softmax(args.norm_rows, args.norm_cols), None
    yield f"layer_norm/f32/{shape}", layer_norm(args.norm_rows, args.norm_cols), None
    yield "op_overhead/add_out/1024", add_out_calls(1024), None


def main():
    ints = lambda text: [int(s) for s in text.split(",") if s]  # noqa: E731
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--min-time", type=float, default=0.5)
    parser.add_argument("--sizes", type=ints, default=[128, 256, 512, 1024, 2048, 4096])
    parser.add_argument("--lowp-sizes", type=ints, default=[1024, 2048])
    parser.add_argument("--add-elements", type=int, default=64 << 20)
    parser.add_argument("--norm-rows", type=int, default=4096)
    parser.add_argument("--norm-cols", type=int, default=4096)
    parser.add_argument("--cases", default="", help="comma-separated name prefixes; default: all")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    wanted = [p for p in args.cases.split(",") if p]
    print(json.dumps({"context": {"torch": torch.__version__, "threads": torch.get_num_threads(),
                                  "blas": loaded_blas(), "mkldnn": torch.backends.mkldnn.is_available()}}),
          flush=True)
    for name, setup, unit_roundoff in cases(args):
        if wanted and not any(name.startswith(p) for p in wanted):
            continue
        record = {"case": name}
        try:
            fn, extra, tensors = setup()
            seconds, iterations = timed(fn, args.min_time)
            record.update(seconds=seconds, iterations=iterations)
            if "flops" in extra:
                record["flops"] = extra["flops"] / seconds
            if "bytes" in extra:
                record["bytes_per_second"] = extra["bytes"] / seconds
            if "calls" in extra:
                record["seconds_per_call"] = seconds / extra["calls"]
            if unit_roundoff is not None:
                record["max_abs_error"], record["tolerance_ratio"] = matmul_error(*tensors, unit_roundoff)
        except (RuntimeError, TypeError) as e:  # e.g. a dtype this torch build cannot multiply
            record["error"] = str(e).splitlines()[0]
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
