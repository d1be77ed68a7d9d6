#!/usr/bin/env python3
"""The conformance suite on the Vulkan plugin, for CTest.

conformance_vulkan.py CATALYST PLUGIN REPORT [--validation]

Without --validation: the whole suite at --level full. It must reach at least core, and no
case may fail except the ones in FLUSH_DEPENDENT, whose outcome depends on whether the
driver's threads flush subnormals (see there); the run prints how they came out.

With --validation: the whole suite again, under VK_LAYER_KHRONOS_validation
(CATALYST_VULKAN_VALIDATION=1), judged the same way. The plugin appends one line per
validation message to CATALYST_VULKAN_VALIDATION_LOG; the run must log zero errors, and
the layer must have been active in at least one worker.
"""
import json
import os
import subprocess
import sys
import tempfile

# gelu_tanh_backward's specials case: dy = inf at x = -10, where the derivative is
# -2.8e-36 but its exp(2u) term is near the f32 subnormal range. Where lavapipe's threads
# keep subnormals the plugin gives inf * that = -inf against the reference's NaN (the
# reference's tanh rounds to -1, so its derivative is exactly 0); where they flush, the
# plugin gives NaN too and passes. Both outcomes were seen on this machine (a helper's
# build, then CI), so these cases are reported, not judged, until the reference and the
# plugins agree on the value (plugins/vulkan/README.md).
FLUSH_DEPENDENT = {f"gelu_tanh_backward.{d}.10" for d in ("f32", "f64", "f16", "bf16")}


def main():
    cli, plugin, report = sys.argv[1:4]
    validation = "--validation" in sys.argv[4:]
    env = dict(os.environ)
    command = [cli, "conformance", "--plugin", plugin, "--level", "full", "--jobs", "2", "--report", report]
    log_path = None
    if validation:
        handle, log_path = tempfile.mkstemp(prefix="catalyst-vulkan-validation-", suffix=".log")
        os.close(handle)
        env["CATALYST_VULKAN_VALIDATION"] = "1"
        env["CATALYST_VULKAN_VALIDATION_LOG"] = log_path
    run = subprocess.run(command, env=env, capture_output=True, text=True)
    sys.stdout.write(run.stdout[-6000:])
    sys.stderr.write(run.stderr[-3000:])
    # 0: the level was reached; 2: nothing failed but a level was missed for unclaimed ops.
    # Failures are judged from the report below.
    assert run.returncode in (0, 1, 2), f"conformance exited with {run.returncode}"
    with open(report) as f:
        result = json.load(f)
    failed = {c["id"] for c in result["cases"] if c["status"] in ("fail", "crash", "timeout")}
    if validation:
        # The memory watch measures the whole process, and the validation layer is a large
        # library inside it that keeps records of its own: judged by conformance_vulkan.
        layer_memory = sorted(f for f in failed if f.endswith(".memory"))
        if layer_memory:
            print(f"memory watches under the validation layer (not judged here): {layer_memory}")
        failed -= set(layer_memory)
    unexpected = sorted(failed - FLUSH_DEPENDENT)
    assert not unexpected, f"cases failed: {unexpected}"
    ok = True
    print(f"subnormal-dependent cases (not judged): failed {sorted(failed & FLUSH_DEPENDENT)}, "
          f"passed {sorted(FLUSH_DEPENDENT - failed)}")
    if not validation:
        level = result["level_reached"]
        print(f"level reached: {level} ({result.get('level_note', '')})")
        if level not in ("core", "training", "full"):
            print("the plugin must reach at least core")
            ok = False
    else:
        with open(log_path) as f:
            lines = [line.split() for line in f if line.strip()]
        os.unlink(log_path)
        active = sum(1 for l in lines if l[0] == "active")
        errors = [l[1] for l in lines if l[0] == "error"]
        warnings = sum(1 for l in lines if l[0] == "warning")
        print(f"validation layer active in {active} process(es): {len(errors)} error(s), {warnings} warning(s)")
        if active == 0:
            print("the validation layer never ran (is vulkan-validationlayers installed?)")
            ok = False
        if errors:
            print("validation errors by message id:", sorted(set(errors)))
            ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
