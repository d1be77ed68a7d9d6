"""`catalyst devices`: what a person bringing up new hardware relies on.

usage: devices_command_test.py CATALYST CPU_PLUGIN CRASH_QUERY CRASH_DEVICES HANG_QUERY EXIT_QUERY GARBAGE

- a plugin that crashes (in ctl_plugin_query or while its devices are enumerated), hangs or
  exits while loading is reported with its file name and the signal, timeout or exit status,
  and the other plugins and devices are still listed;
- the exit status says when a --plugin file was missing, rejected or crashed (3), and when
  CATALYST_DEVICE names no device (4);
- every device shows the name --device and CATALYST_DEVICE take, and the default is marked,
  in text and JSON; each name, given as CATALYST_DEVICE, makes that device the default.
"""
import json
import os
import subprocess
import sys

CATALYST, CPU, CRASH_QUERY, CRASH_DEVICES, HANG, EXIT, GARBAGE = sys.argv[1:8]
MISSING = "/nonexistent/libcatalyst-missing.so"


def run(*args, device=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATALYST_")}
    if device is not None:
        env["CATALYST_DEVICE"] = device
    proc = subprocess.run([CATALYST, "devices", *args], capture_output=True, text=True, env=env, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def plugins_by_path(listing):
    return {p["path"]: p for p in listing["plugins"]}


def check(condition, what, *context):
    if not condition:
        print("FAILED:", what, *context, sep="\n", file=sys.stderr)
        sys.exit(1)


def crashing_plugins_are_reported_and_the_listing_goes_on():
    args = ["--plugin", CRASH_QUERY, "--plugin", CRASH_DEVICES, "--plugin", EXIT, "--plugin", CPU]
    rc, out, err = run("--json", *args)
    check(rc == 3, f"exit status {rc}, want 3 (a --plugin file crashed)", out, err)
    listing = json.loads(out)
    plugins = plugins_by_path(listing)
    for path in (CRASH_QUERY, CRASH_DEVICES):
        p = plugins[path]
        check(p["state"] == "crashed" and not p["accepted"], "not reported as crashed", p)
        check(p.get("signal") == 11 and "signal 11" in p["reason"], "signal not named", p)
        check(path in err and "signal 11" in err, "standard error does not name the file and signal", err)
    p = plugins[EXIT]
    check(p["state"] == "exited" and "exit status 7" in p["reason"], "exit not reported", p)
    check(plugins[CPU]["accepted"], "the CPU plugin was not loaded after the crashes", plugins[CPU])
    check(any(d["id"] == "cpu:0" for d in listing["devices"]), "no cpu:0 device listed", out)

    rc, out, err = run(*args)
    check(rc == 3, f"text: exit status {rc}, want 3", out, err)
    lines = out.splitlines()
    for path in (CRASH_QUERY, CRASH_DEVICES):
        check(any(line.split() == ["[crashed]", path] for line in lines), "text: no [crashed] line for " + path, out)
    check("signal 11 (Segmentation fault)" in out, "text: signal not named", out)
    check(any(" cpu:0 " in line and line.lstrip().startswith("[") for line in lines), "text: no cpu:0 device", out)


def a_hanging_plugin_times_out():
    rc, out, err = run("--json", "--probe-timeout", "1", "--plugin", HANG, "--plugin", CPU)
    check(rc == 3, f"exit status {rc}, want 3", out, err)
    p = plugins_by_path(json.loads(out))[HANG]
    check(p["state"] == "timed out" and "no answer within 1 s" in p["reason"], "hang not reported", p)


def exit_status_says_when_a_named_plugin_is_unusable():
    for path, words in ((MISSING, "file not found"), (GARBAGE, "dlopen failed")):
        rc, out, err = run("--json", "--plugin", path)
        check(rc == 3, f"--plugin {path}: exit status {rc}, want 3", out, err)
        p = plugins_by_path(json.loads(out))[path]
        check(p["state"] == "rejected" and words in p["reason"], "reason", p)
    rc, out, err = run("--plugin", CPU)
    check(rc == 0, f"--plugin CPU: exit status {rc}, want 0", out, err)
    rc, out, err = run("--plugin")
    check(rc == 2, f"--plugin without a path: exit status {rc}, want 2", out, err)
    rc, out, err = run("--help")
    check(rc == 0 and "exit status" in out and "  3  " in out, "--help lacks the exit statuses", out)


def names_and_default_in_text_and_json():
    rc, out, err = run("--json", "--plugin", CPU)
    check(rc == 0, f"exit status {rc}", out, err)
    listing = json.loads(out)
    devices = listing["devices"]
    counts = {}
    for d in devices:
        want = f'{d["plugin"]}:{counts.get(d["plugin"], 0)}'
        counts[d["plugin"]] = counts.get(d["plugin"], 0) + 1
        check(d["id"] == want, f"id {d['id']!r}, want {want!r}", d)
    defaults = [d["id"] for d in devices if d["default"]]
    check(len(defaults) == 1 and listing["default_device"] == defaults[0], "default not marked once", out)

    for d in devices:  # each printed name, given back as CATALYST_DEVICE, chooses that device
        rc, out, err = run("--json", "--plugin", CPU, device=d["id"])
        chosen = json.loads(out)
        check(rc == 0 and chosen["default_device"] == d["id"], f"CATALYST_DEVICE={d['id']}", out, err)
        check([x["id"] for x in chosen["devices"] if x["default"]] == [d["id"]], "default mark", out)
        rc, out, err = run("--plugin", CPU, device=d["id"])
        marked = [line for line in out.splitlines() if line.rstrip().endswith("(default)")]
        check(len(marked) == 1 and f"] {d['id']}  " in marked[0], f"text: default mark for {d['id']}", out)
        check(f"Default device: {d['id']} (CATALYST_DEVICE={d['id']})" in out, "text: default line", out)

    rc, out, err = run("--json", "--plugin", CPU, device="bogus:9")
    check(rc == 4, f"CATALYST_DEVICE=bogus:9: exit status {rc}, want 4", out, err)
    listing = json.loads(out)
    check(listing["default_device"] is None and not any(d["default"] for d in listing["devices"]), "a default", out)
    message = listing["default_device_error"]
    check('CATALYST_DEVICE="bogus:9"' in message and "0 = cpu:0" in message, "error message", message)
    rc, out, err = run("--plugin", CPU, device="bogus:9")
    check(rc == 4 and "Default device: none." in out and 'CATALYST_DEVICE="bogus:9"' in out, "text", out)


crashing_plugins_are_reported_and_the_listing_goes_on()
a_hanging_plugin_times_out()
exit_status_says_when_a_named_plugin_is_unusable()
names_and_default_in_text_and_json()
print("devices_command_test: all checks passed")
