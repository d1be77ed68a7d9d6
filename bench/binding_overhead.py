#!/usr/bin/env python3
"""binding_overhead.py — the cost of one tiny op from every language Catalyst is embedded
in, measured in one run: `add` of two 1-element f32 tensors on the CPU device, the result
a new tensor that is released at once (the "binary" form), and where the language has it
the same add into a preallocated output ("run_into").

  C        bench/op_overhead_bench.c (built here with cc when the build tree lacks
           catalyst-op-overhead-bench): ctl_op_binary + ctl_tensor_release
  Python   the catalyst package of the build tree: catalyst.add(a, b), a + b
  PyTorch  bench/torch_op_overhead_bench.py: torch.add(a, b), OMP_WAIT_POLICY=passive
  Rust     bindings/rust/examples/tiny_op_bench.rs, when built (or with --build-missing)
  Go       BenchmarkTinyAdd in bindings/go (go test -bench), when the build configured Go

Each runs in its own process, one after another, each timing N back-to-back calls per
repeat; the figure is the median over the repeats (Go: over -count runs) of nanoseconds per
call, wall clock and CPU time. Prints a table with each language's ratio to C.

Usage: bench/binding_overhead.py BUILD_DIR [--calls N] [--repeats R] [--build-missing] [--json]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PYTHON_SNIPPET = r"""
import json, statistics, sys, time
import catalyst
calls, repeats = int(sys.argv[1]), int(sys.argv[2])
a = catalyst.tensor([1.0]); b = catalyst.tensor([2.0]); c = catalyst.empty([1])
add, op = catalyst.add, catalyst.op
def timed(body):
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.thread_time()
        body()
        wall.append((time.perf_counter() - start) * 1e9 / calls)
        cpu.append((time.thread_time() - start_cpu) * 1e9 / calls)
    return statistics.median(wall), statistics.median(cpu)
def binary():
    for _ in range(calls): add(a, b)
def operator():
    for _ in range(calls): a + b
def into():
    for _ in range(calls): op("add", a, b, into=c)
for _ in range(1000): add(a, b)
binary_ns, operator_ns, into_ns = timed(binary), timed(operator), timed(into)
assert c.item() == 3.0 and add(a, b).item() == 3.0
print(json.dumps({"framework": "catalyst-python", "binary_ns_per_call": binary_ns[0],
                  "binary_cpu_ns_per_call": binary_ns[1], "operator_ns_per_call": operator_ns[0],
                  "operator_cpu_ns_per_call": operator_ns[1], "run_into_ns_per_call": into_ns[0],
                  "run_into_cpu_ns_per_call": into_ns[1]}))
"""


def last_json_line(text):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line in:\n" + text)


def run(command, env=None, cwd=None, timeout=900):
    full_env = dict(os.environ)
    full_env.update(env or {})
    done = subprocess.run(command, env=full_env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def c_program(build):
    built = os.path.join(build, "bin", "catalyst-op-overhead-bench")
    if os.path.exists(built):
        return built
    out_dir = os.path.join(build, "binding_overhead")
    os.makedirs(out_dir, exist_ok=True)
    program = os.path.join(out_dir, "op_overhead_bench")
    lib = os.path.join(build, "lib")
    run(["cc", "-O2", "-std=c99", os.path.join(ROOT, "bench", "op_overhead_bench.c"), "-I", os.path.join(ROOT, "abi"),
         "-L", lib, f"-Wl,-rpath,{lib}", "-lcatalyst", "-o", program])
    return program


def measure_c(build, args, env):
    r = last_json_line(run([c_program(build), "--calls", str(args.calls), "--repeats", str(args.repeats)], env))
    return {"binary": (r["binary_ns_per_call"], r["binary_cpu_ns_per_call"]),
            "run_into": (r["run_into_ns_per_call"], r["run_into_cpu_ns_per_call"])}


def measure_python(build, args, env):
    package = os.path.join(build, "python")
    if not os.path.isdir(os.path.join(package, "catalyst")):
        return "not built (no catalyst package in BUILD_DIR/python)"
    env = dict(env, PYTHONPATH=package)
    r = last_json_line(run(["/usr/bin/python3", "-c", PYTHON_SNIPPET, str(args.calls), str(args.repeats)], env))
    return {"binary": (r["binary_ns_per_call"], r["binary_cpu_ns_per_call"]),
            "operator +": (r["operator_ns_per_call"], r["operator_cpu_ns_per_call"]),
            "run_into": (r["run_into_ns_per_call"], r["run_into_cpu_ns_per_call"])}


def measure_torch(build, args, env):
    env = dict(env, OMP_WAIT_POLICY="passive")
    r = last_json_line(run(["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_op_overhead_bench.py"), "--calls",
                            str(args.calls), "--repeats", str(args.repeats)], env))
    return {"binary": (r["binary_ns_per_call"], r["binary_cpu_ns_per_call"]),
            "run_into": (r["run_into_ns_per_call"], r["run_into_cpu_ns_per_call"])}


def measure_rust(build, args, env):
    crate = os.path.join(ROOT, "bindings", "rust")
    target = os.path.join(build, "bindings", "rust", "target")
    program = os.path.join(target, "release", "examples", "tiny_op_bench")
    if not os.path.exists(program):
        cargo = shutil.which("cargo")
        if not (args.build_missing and cargo and os.path.isdir(crate)):
            return "not built (cargo build --offline --release --example tiny_op_bench, or --build-missing)"
        run([cargo, "build", "--offline", "--release", "--quiet", "--example", "tiny_op_bench"],
            dict(env, CATALYST_LIB_DIR=os.path.join(build, "lib"), CARGO_TARGET_DIR=target), cwd=crate)
    r = last_json_line(run([program, "--calls", str(args.calls), "--repeats", str(args.repeats)],
                           dict(env, LD_LIBRARY_PATH=os.path.join(build, "lib"))))
    return {"binary": (r["binary_ns_per_call"], r["binary_cpu_ns_per_call"]),
            "run_into": (r["run_into_ns_per_call"], r["run_into_cpu_ns_per_call"])}


def measure_go(build, args, env):
    module = os.path.join(ROOT, "bindings", "go")
    pc_dir = os.path.join(build, "bindings", "go", "pkgconfig")
    go = shutil.which("go")
    if not (go and os.path.exists(os.path.join(module, "bench_test.go")) and os.path.isdir(pc_dir)):
        return "not built (no go, or the build did not configure bindings/go)"
    go_env = dict(env, PKG_CONFIG_PATH=pc_dir, GOCACHE=os.path.join(build, "bindings", "go", "gocache"),
                  GOPATH=os.path.join(build, "bindings", "go", "gopath"), GOFLAGS="-mod=readonly", GOPROXY="off",
                  GOTOOLCHAIN="local", CGO_ENABLED="1",
                  CATALYST_TEST_CPU_PLUGIN=os.path.join(build, "lib", "catalyst", "plugins", "libcatalyst-cpu.so"))
    out = run([go, "test", "-run", "^$", "-bench", "^BenchmarkTinyAdd$", "-benchtime", f"{args.calls}x", "-count",
               str(args.repeats), "."], go_env, cwd=module)
    wall, cpu = [], []
    for line in out.splitlines():
        if line.startswith("BenchmarkTinyAdd"):
            fields = line.split()
            for value, unit in zip(fields[2::2], fields[3::2]):
                if unit == "ns/op":
                    wall.append(float(value))
                elif unit == "cpu-ns/op":
                    cpu.append(float(value))
    if not wall:
        raise RuntimeError("no BenchmarkTinyAdd line in:\n" + out)
    return {"binary": (statistics.median(wall), statistics.median(cpu) if cpu else float("nan"))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("build_dir")
    parser.add_argument("--calls", type=int, default=200000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--build-missing", action="store_true", help="build the Rust benchmark if it is not built")
    parser.add_argument("--json", action="store_true", help="also print every figure as one JSON line")
    args = parser.parse_args()
    build = os.path.abspath(args.build_dir)
    # One device for every language: the CPU plugin's first device (the C program and the
    # Go benchmark take the default device).
    env = {"CATALYST_DEVICE": os.environ.get("CATALYST_DEVICE", "cpu:0")}
    results = {}
    for name, measure in (("C", measure_c), ("Python (catalyst)", measure_python),
                          ("PyTorch torch.add", measure_torch), ("Rust", measure_rust), ("Go", measure_go)):
        started = time.monotonic()
        try:
            results[name] = measure(build, args, env)
        except (RuntimeError, ValueError, OSError, subprocess.TimeoutExpired) as e:
            results[name] = f"failed: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}"
        print(f"# {name}: {time.monotonic() - started:.0f} s", file=sys.stderr)

    c_wall, c_cpu = results["C"]["binary"] if isinstance(results["C"], dict) else (float("nan"),) * 2
    print(f"tiny op: add of two 1-element f32 tensors on {env['CATALYST_DEVICE']}, {args.calls} calls x "
          f"{args.repeats} repeats, medians in ns per call")
    print(f"{'language':<20} {'form':<12} {'wall ns':>9} {'CPU ns':>9} {'wall / C':>9} {'CPU / C':>8}")
    for name, result in results.items():
        if isinstance(result, str):
            print(f"{name:<20} {result}")
            continue
        for form, (wall, cpu) in result.items():
            reference = results["C"].get(form) if isinstance(results["C"], dict) else None
            rw, rc = (reference if reference and form != "operator +" else (c_wall, c_cpu))
            print(f"{name:<20} {form:<12} {wall:9.1f} {cpu:9.1f} {wall / rw:8.2f}x {cpu / rc:7.2f}x")
    torch_result, python_result = results.get("PyTorch torch.add"), results.get("Python (catalyst)")
    if isinstance(torch_result, dict) and isinstance(python_result, dict):
        ratio = python_result["binary"][1] / torch_result["binary"][1]
        print(f"Python binary add vs torch.add: {ratio:.2f}x (CPU time; goal: at most 1.00x)")
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
