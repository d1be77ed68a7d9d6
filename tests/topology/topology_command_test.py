"""`catalyst topology` and `catalyst topology --json` on the fixture server with four fake
GPUs (and one whose bus id the server lacks): what the user reads, and JSON that a parser
other than ours accepts, with the joins, links and placement order in it.

usage: topology_command_test.py CATALYST FAKE_GPUS_PLUGIN FIXTURES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

catalyst, plugin, fixtures = sys.argv[1:4]


def run(*args, topology="two_socket_four_gpus.xml", expect=0):
    env = dict(os.environ)
    env["CATALYST_TOPOLOGY"] = os.path.join(fixtures, topology)
    env["CATALYST_FAKE_GPUS"] = ("pci=0000:17:00.0;pci=0000:31:00.0;pci=0000:b1:00.0;pci=0000:ca:00.0;"
                                 "pci=0000:e3:00.0")
    env["CATALYST_FAKE_GPUS_PEER"] = "1"
    env["CATALYST_CACHE_DIR"] = cache
    result = subprocess.run([catalyst, "topology", "--plugin", plugin, *args], capture_output=True, text=True,
                            env=env)
    assert result.returncode == expect, (result.returncode, result.stdout, result.stderr)
    return result


with tempfile.TemporaryDirectory() as cache:
    text = run().stdout
    print(text)
    for words in ["2 package(s), 2 NUMA node(s), 16 core(s)", "fakegpu:2", "joined by PCI bus id 0000:b1:00.0",
                  "PCI bus id 0000:e3:00.0 (reported by the plugin) is not in the topology", "cross-package 6.0", "same-numa 12.0",
                  "Automatic placement order"]:
        assert words in text, words

    report = json.loads(run("--json").stdout)
    devices = {d["name"]: d for d in report["devices"] if d["plugin"] == "fakegpu"}
    assert devices["fakegpu:0"]["locality"]["package"] == 0, devices["fakegpu:0"]
    assert devices["fakegpu:3"]["locality"]["numa_node"] == 1, devices["fakegpu:3"]
    assert devices["fakegpu:4"]["locality"]["known"] is False, devices["fakegpu:4"]
    assert devices["fakegpu:4"]["locality"]["package"] is None, devices["fakegpu:4"]
    links = {(l["from"], l["to"]): l for l in report["links"]}
    assert links[("fakegpu:0", "fakegpu:1")]["class"] == "same_numa_node"
    assert links[("fakegpu:1", "fakegpu:2")]["class"] == "cross_package"
    assert links[("fakegpu:1", "fakegpu:2")]["measured"] is False
    # Plugins beside libcatalyst (the CPU plugin) may be listed too; among the fake GPUs the
    # one of unknown locality comes last.
    order = [p["device"] for p in report["placement_order"] if p["device"].startswith("fakegpu:")]
    assert order[-1] == "fakegpu:4", report["placement_order"]

    # --measure times every pair and the figures are marked as measured, here and next time.
    measured = json.loads(run("--json", "--measure").stdout)
    assert all(l["measured"] for l in measured["links"] if l["from"] != l["to"]), measured["links"]
    later = json.loads(run("--json").stdout)
    assert all(l["measured"] for l in later["links"] if l["from"] != l["to"]), later["links"]
    assert "*" in run().stdout

    # A bad override file: the tool still shows the devices, each with unknown locality.
    bad = run(topology="bad_unknown_member.json")
    assert "no topology:" in bad.stdout and "unknown member" in bad.stdout, bad.stdout
    assert "every device has unknown locality" in bad.stderr, bad.stderr

    usage = run("--frobnicate", expect=2)
    assert "unknown option" in usage.stderr
print("ok")
