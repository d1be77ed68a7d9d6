"""GPT tokens/s on one device and split over two (README "Several devices"): the trainer's
default model, 30 steps per run, median of 3 runs per row, with each device's busy share in
the last step from log.jsonl. The CPU is split with CATALYST_CPU_DEVICES=2.

usage: bench/pipeline_split.py [BUILD_DIR]   (default: build)
"""
import json, os, statistics, subprocess, sys, tempfile

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
T = os.path.join(BUILD, "bin", "catalyst-train-gpt")
TMP = tempfile.mkdtemp(prefix="catalyst-split-bench-")
cases = [
    ("one device: cpu (both cores)", {"CATALYST_CPU_DEVICES": "1"}, ["--device", "cpu:0"]),
    ("one device: cpu:0 (one core)", {"CATALYST_CPU_DEVICES": "2"}, ["--device", "cpu:0"]),
    ("split: cpu:0 + cpu:1", {"CATALYST_CPU_DEVICES": "2"}, ["--devices", "cpu:0,cpu:1"]),
    ("one device: opencl:0 (PoCL)", {"CATALYST_CPU_DEVICES": "1"}, ["--device", "opencl:0"]),
    ("split: cpu:0 + opencl:0", {"CATALYST_CPU_DEVICES": "1"}, ["--devices", "cpu:0,opencl:0"]),
]
for label, env, flags in cases:
    rates = []
    for i in range(3):
        out = os.path.join(TMP, f"run-{i}")
        subprocess.run([T, *flags, "--steps", "30", "--eval-every", "1000", "--checkpoint-every", "1000",
                        "--sample-length", "1", "--quiet", "--out", out], env=dict(os.environ, **env),
                       capture_output=True, check=True)
        recs = [json.loads(l) for l in open(out + "/log.jsonl")]
        rates.append(recs[-1]["tokens_per_second"])
        busy = ", ".join(f"{d['device']} {100*d['busy']:.0f}%" for d in recs[-1]["devices"])
    print(f"{label:32s} {statistics.median(rates):8.0f} tokens/s  (busy in the last step: {busy})", flush=True)
