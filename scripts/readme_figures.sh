#!/usr/bin/env bash
# readme_figures.sh — regenerates the README's demo figures from one run of the demo's
# training command on this machine, so that they cannot go stale: the region of README.md
# between `<!-- demo-figures:begin -->` and `<!-- demo-figures:end -->` is replaced by the
# machine (CPU, cores, CPUID flags that matter, load average), the date, the commit, the
# command, the speed, the time per phase, the validation losses beside the unigram baseline
# and the start of the sample. Builds nothing: run scripts/demo.sh (or build catalyst and the
# CPU plugin) first.
#   BUILD_DIR      the build (default ./build)
#   GPT_PRECISION  --precision of the run (default: the demo's, f32)
#   README         the file to update (default README.md at the top of the repository)
#   FIGURES_COMMIT the commit the build was made from (default: HEAD, flagged when the
#                  checkout has uncommitted changes to the sources)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
README=${README:-$ROOT/README.md}
PRECISION=${GPT_PRECISION:-f32}
tool="$BUILD_DIR/bin/catalyst"
if [[ ! -x "$tool" ]]; then
  echo "readme_figures.sh: no $tool; build first (scripts/demo.sh does)" >&2
  exit 2
fi
grep -q '<!-- demo-figures:begin -->' "$README" || {
  echo "readme_figures.sh: $README has no <!-- demo-figures:begin --> marker" >&2
  exit 2
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The demo's command (scripts/demo.sh), run from the build folder as a user would.
cmd=(bin/catalyst train-gpt --out gpt-run-figures --precision "$PRECISION")
# The machine's busy time (/proc/stat, all CPUs) against the run's own CPU time tells
# whether other work shared the cores: the load average cannot, since the run's own two
# threads raise it to about 2.
busy_jiffies() { awk '/^cpu /{ print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
busy_before=$(busy_jiffies)
start=$(date +%s.%N)
(cd "$BUILD_DIR" && rm -rf gpt-run-figures && "${cmd[@]}") >"$work/stdout" 2>"$work/stderr" || {
  cat "$work/stderr" >&2
  exit 1
}
end=$(date +%s.%N)
busy_after=$(busy_jiffies)
# `times`' second line: the user and system time of this shell's finished children, the run.
# Not in $(...): that subshell has no children of its own to report.
times >"$work/times"
own_cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; ++i) { split($i, p, /[ms]/); n += p[1] * 60 + p[2] } print n }' "$work/times")
others_cpu=$(awk -v a="$busy_before" -v b="$busy_after" -v own="$own_cpu" -v hz="$(getconf CLK_TCK)" \
  'BEGIN { o = (b - a) / hz - own; printf "%.1f", o < 0 ? 0 : o }')
cp "$BUILD_DIR/gpt-run-figures/log.jsonl" "$BUILD_DIR/gpt-run-figures/sample.txt" "$work/"

# FIGURES_COMMIT names the sources when the build is not of this checkout's working tree.
commit=${FIGURES_COMMIT:-$(git -C "$ROOT" rev-parse --short HEAD)}
if [[ -z "${FIGURES_COMMIT:-}" ]] && ! git -C "$ROOT" diff --quiet HEAD -- examples bindings core plugins tools; then
  commit="$commit plus uncommitted changes"
fi

/usr/bin/python3 - "$work" "$README" "$commit" "$load_before" "$start" "$end" "${cmd[*]}" \
  "$own_cpu" "$others_cpu" <<'EOF'
import json, os, re, statistics, subprocess, sys, time
work, readme, commit, load_before, start, end, command, own_cpu, others_cpu = sys.argv[1:10]
log = [json.loads(line) for line in open(os.path.join(work, "log.jsonl")) if line.strip()]
stdout = open(os.path.join(work, "stdout"), errors="replace").read()  # the sample is any bytes
stderr = open(os.path.join(work, "stderr"), errors="replace").read()
header = re.search(r"training a (\d+)-parameter GPT \(context (\d+), width (\d+), (\d+) heads, (\d+) layers, (\w+) products\)",
                   stderr)
baseline = float(re.search(r"gives a validation loss of ([\d.]+) nats", stderr).group(1))
final_line = re.search(r"validation loss ([\d.]+) nats over the whole validation split \((\d+) bytes.*?\); "
                       r"([\d.]+) on the (\d+) sampled windows", stdout)
final, held_out, sampled, windows = (float(final_line.group(1)), int(final_line.group(2)),
                                     float(final_line.group(3)), int(final_line.group(4)))
phases = re.search(r"^time: (.*)$", stdout, re.M).group(1)
cpu = {}
for line in open("/proc/cpuinfo"):
    key, _, value = line.partition(":")
    cpu.setdefault(key.strip(), value.strip())
flags = cpu.get("flags", "").split()
shown = [f for f in ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile") if f in flags]
missing = [f for f in ("avx512_bf16", "avx512_fp16", "amx_bf16") if f not in flags]
tokens = [r["tokens_per_second"] for r in log]
vals = [(r["step"], r["val_loss"]) for r in log if "val_loss" in r]
marks = [vals[i] for i in sorted({round(k * (len(vals) - 1) / 4) for k in range(5)})]  # five, evenly spaced
sample = open(os.path.join(work, "sample.txt"), errors="replace").read().splitlines()
sample = [line for line in sample if line.strip()][:6]
params, context, width, heads, layers, precision = header.groups()
batch = 16  # train-gpt's default, which the demo keeps
steps = log[-1]["step"]
wall = float(end) - float(start)
others = float(others_cpu) / max(wall, 1e-9)  # cores' worth of other work during the run
loaded = others > 0.1
block = f"""<!-- demo-figures:begin -->
<!-- Written by scripts/readme_figures.sh; run it again rather than editing this block. -->
Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(float(start)))} by `scripts/readme_figures.sh`, which
ran `{command}` in the build folder (commit {commit}) on {os.cpu_count()} CPUs of a
machine whose `/proc/cpuinfo` names its CPU "{cpu.get('model name', '?')}" (CPUID flags:
{', '.join(f'`{f}`' for f in shown)}{'; no ' + ', no '.join(f'`{f}`' for f in missing) if missing else ''}).
Load average {load_before.split()[0]} before the run; during it the run used {float(own_cpu):.0f} CPU-seconds
and other processes {float(others_cpu):.1f}{
' (other work shared the cores, so an idle machine is faster)' if loaded else ' (the cores were otherwise idle)'}.

- Model: {int(params):,} parameters (context {context}, width {width}, {heads} heads, {layers} layers), products in
  {precision}; {steps:,} steps of batch {batch} × {context} bytes.
- Speed: **{statistics.median(tokens):,.0f} tokens/s** (median of the log's running figure); the whole command
  took **{int(wall // 60)}m{int(wall % 60):02d}s**. Time per phase: {phases}.
- Validation loss on the {windows} sampled windows the log tracks: {', '.join(f'**{v:.2f}** after {s:,} steps' for s, v in marks)}.
- Final validation loss over the whole validation split ({held_out:,} bytes): **{final:.3f} nats**
  ({sampled:.3f} on the sampled windows), beside **{baseline:.3f}** for predicting byte frequencies
  (the best a model without context can do).
- The start of the sample (`sample.txt`):

  ```
{chr(10).join('  ' + line for line in sample)}
  ```
<!-- demo-figures:end -->"""
text = open(readme).read()
new = re.sub(r"<!-- demo-figures:begin -->.*?<!-- demo-figures:end -->", lambda _: block, text, flags=re.S)
open(readme, "w").write(new)
print(block)
EOF
