#!/usr/bin/env python3
"""The conformance suite on the Vulkan plugin, for CTest.

conformance_vulkan.py CATALYST PLUGIN REPORT [--validation] [--exclude PATTERN]

Without --validation: the whole suite at --level full. No case may fail, crash or time
out, the run must reach the full level, and no numeric case may be unsupported except for
the ops the op set makes optional (OPTIONAL_OPS): the full level alone does not count
unsupported cases outside core, so this is what holds the plugin to computing every op in
every dtype the device reports. Contract cases of optional entries (host pointers) may be
unsupported.

With --validation: the whole suite again, under VK_LAYER_KHRONOS_validation
(CATALYST_VULKAN_VALIDATION=1): no case may fail (memory watches aside, see below). The
plugin appends one line per validation message to CATALYST_VULKAN_VALIDATION_LOG; the run
must log zero errors, and the layer must have been active in at least one worker.

--exclude is passed to the suite (the CI subset of tests/CMakeLists.txt leaves the large
cases out of the validation run; the run without the layer has them).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# docs/ops.md: a plugin may leave the fused elementwise op (ABI 1.5) unclaimed.
OPTIONAL_OPS = {"fused_elementwise"}


def main():
    cli, plugin, report = sys.argv[1:4]
    extra = sys.argv[4:]
    validation = "--validation" in extra
    env = dict(os.environ)
    command = [cli, "conformance", "--plugin", plugin, "--level", "full", "--jobs", "2", "--report", report]
    if "--exclude" in extra:
        command += ["--exclude", extra[extra.index("--exclude") + 1]]
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
    assert not failed, f"cases failed: {sorted(failed)}"
    ok = True
    if not validation:
        level = result["level_reached"]
        print(f"level reached: {level} ({result.get('level_note', '')})")
        if level != "full":
            print("the plugin must reach the full level")
            ok = False
        reported = set(result["device"]["dtypes"].split())
        unclaimed = sorted(c["id"] for c in result["cases"] if c["status"] == "unsupported" and
                           c.get("op") not in OPTIONAL_OPS and c.get("op") != "contract" and
                           set(re.findall(r"[a-z0-9]+", c.get("dtype", ""))) <= reported)
        if unclaimed:
            print(f"{len(unclaimed)} numeric case(s) unclaimed in a dtype the device reports: {unclaimed[:40]}")
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
