"""torch_matmul_bench.py — PyTorch's f32 matmul throughput, the peer figure beside
catalyst-matmul-bench: N x N by N x N products, one untimed warm-up, the median of
--repeats timed ones, one JSON line per size in catalyst-matmul-bench's format.

usage: torch_matmul_bench.py [--device cpu|cuda] [--sizes 256,1024,2048] [--repeats 5]

On CUDA, TF32 is switched off so the figure is a true f32 GEMM (cuBLAS SGEMM), and each
timed product ends with torch.cuda.synchronize().
"""
import argparse
import json
import os
import statistics
import time

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--sizes", default="256,1024,2048")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    if args.device == "cuda":
        if not torch.cuda.is_available():
            raise SystemExit("torch_matmul_bench.py: torch has no CUDA device here")
        torch.backends.cuda.matmul.allow_tf32 = False
        name = torch.cuda.get_device_name(0)
        sync = torch.cuda.synchronize
    else:
        torch.set_num_threads(os.cpu_count())  # as many threads as Catalyst's CPU plugin uses
        name = f"torch {torch.__version__}, {torch.get_num_threads()} threads"
        sync = lambda: None  # noqa: E731
    generator = torch.Generator(device=args.device).manual_seed(1)
    for n in (int(s) for s in args.sizes.split(",") if s):
        a = torch.rand(n, n, device=args.device, generator=generator) * 2 - 1
        b = torch.rand(n, n, device=args.device, generator=generator) * 2 - 1
        torch.mm(a, b)
        sync()
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            torch.mm(a, b)
            sync()
            times.append(time.perf_counter() - start)
        gflops = 2.0 * n ** 3 / statistics.median(times) / 1e9
        print(json.dumps({"bench": "matmul_f32", "device": f"torch-{args.device}", "name": name, "n": n,
                          "gflops": round(gflops, 3)}), flush=True)


if __name__ == "__main__":
    main()
