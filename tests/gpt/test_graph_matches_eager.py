"""`catalyst train-gpt --graph` trains exactly as eager execution does: the same small GPT,
data and seed, trained for 100 steps eagerly and as captured, optimised graphs (every
pass on), must log the same loss and gradient norm at every step and end with the same
parameter and optimizer bytes in the checkpoint. On the CPU plugin every pass keeps the
order of operations, so this is bit for bit; on OpenCL (PoCL) the fused kernels compute
each instruction with the separate kernels' expressions, so it is bit for bit there too.

It also pins the plugin launches of one GPT step before and after each pass (the graphs'
node counts, from --dump-graph's passes.txt), as tinygrad's schedule tests pin kernel
counts: a pass that silently stops firing fails here. When a change to the model or a
pass moves these numbers on purpose, update PINNED with the numbers the failure prints.

usage: test_graph_matches_eager.py CATALYST_TRAIN_GPT DEVICE PLUGIN_FILE...
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_device_tracks_cpu import read_log  # noqa: E402
from test_resume import corpus  # noqa: E402

TRAINER = None
DEVICE = None
PLUGINS = []
STEPS = 100
SMALL = ["--context", "16", "--width", "32", "--heads", "2", "--layers", "2", "--batch", "4",
         "--steps", str(STEPS), "--checkpoint-every", "1000", "--eval-every", "50", "--eval-batches", "2",
         "--warmup", "20", "--sample-length", "20", "--quiet"]

# Nodes of the step graph (plugin launches per step) for SMALL: as captured, then after
# each pass in the default order. The graph holds forward, backward and the clip's
# per-parameter squared norms.
PINNED = {
    "captured": 232,
    "dce": 232,
    "fold": 229,
    "cse": 229,
    "fuse_epilogue": 225,
    "fuse_elementwise": 221,
    "plan_memory": 221,
}


def read_checkpoint_bytes(path):
    """The tensors' bytes by name (safetensors: u64 header size, JSON header, data)."""
    import json
    import struct
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    header.pop("__metadata__", None)
    data = blob[8 + n:]
    return {name: data[info["data_offsets"][0]:info["data_offsets"][1]] for name, info in header.items()}


def read_passes(path):
    """{graph: {"captured": n, pass: nodes after it}} from passes.txt."""
    graphs, current = {}, None
    with open(path) as f:
        for line in f:
            m = re.match(r"(\w+) graph: (\d+) nodes captured", line)
            if m:
                current = graphs.setdefault(m.group(1), {"captured": int(m.group(2))})
                continue
            m = re.match(r"\s+(\w+): (\d+) -> (\d+) nodes \((\d+) changes\)", line)
            if m and current is not None:
                current[m.group(1)] = int(m.group(3))
    return graphs


class GraphMatchesEager(unittest.TestCase):
    def train(self, data, out, *extra):
        env = dict(os.environ, CATALYST_PLUGINS=":".join(PLUGINS))
        env.pop("CATALYST_GRAPH_PASSES", None)  # every pass
        proc = subprocess.run([TRAINER, "--data", data, "--out", out, "--device", DEVICE, *SMALL, *extra],
                              env=env, capture_output=True, text=True, errors="replace")
        self.assertEqual(proc.returncode, 0, f"training on {DEVICE} {extra} failed:\n{proc.stderr}")
        return read_log(os.path.join(out, "log.jsonl")), proc.stderr

    def test_bf16_graph_training_is_eager_training(self):
        """--precision bf16 keeps the 16-bit products' rounding: a pass that fused a bf16
        product's bias add (rounded once instead of twice) would change the bits."""
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "text.txt")
            corpus(data)
            short = ["--steps", "30", "--precision", "bf16"]
            eager, _ = self.train(data, os.path.join(tmp, "eager"), "--no-graph", *short)
            graph, _ = self.train(data, os.path.join(tmp, "graph"), "--graph", *short)
            self.assertEqual(len(eager), 30)
            for a, b in zip(eager, graph):
                self.assertEqual((a["step"], a["loss"], a["grad_norm"]), (b["step"], b["loss"], b["grad_norm"]),
                                 f"step {a['step']}: eager and graph bf16 training differ")

    def test_graph_training_is_eager_training(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "text.txt")
            corpus(data)
            eager, _ = self.train(data, os.path.join(tmp, "eager"), "--no-graph")
            dump = os.path.join(tmp, "dump")
            graph, stderr = self.train(data, os.path.join(tmp, "graph"), "--graph", "--dump-graph", dump)
            self.assertIn("graphs: step graph", stderr)
            self.assertEqual(len(eager), STEPS)
            self.assertEqual(len(graph), STEPS)
            for a, b in zip(eager, graph):
                self.assertEqual((a["step"], a["loss"], a["grad_norm"]), (b["step"], b["loss"], b["grad_norm"]),
                                 f"step {a['step']}: eager and graph training differ")
                if "val_loss" in a:
                    self.assertEqual(a["val_loss"], b["val_loss"])
            ea = read_checkpoint_bytes(os.path.join(tmp, "eager", "checkpoint.safetensors"))
            ga = read_checkpoint_bytes(os.path.join(tmp, "graph", "checkpoint.safetensors"))
            self.assertEqual(sorted(ea), sorted(ga))
            differing = [name for name in ea if ea[name] != ga[name]]
            self.assertEqual(differing, [], "tensors whose bytes differ after 100 steps")
            self.assertLess(graph[-1]["loss"], 0.8 * graph[0]["loss"], "the loss did not fall")

            # The dump: DOT and SVG of both graphs before and after the passes, SVG that parses.
            import xml.etree.ElementTree as ElementTree
            for name in ("step", "update"):
                for stage in ("captured", "optimized"):
                    with open(os.path.join(dump, f"{name}_{stage}.dot")) as f:
                        self.assertIn("digraph", f.read())
                    root = ElementTree.parse(os.path.join(dump, f"{name}_{stage}.svg")).getroot()
                    self.assertTrue(root.tag.endswith("svg"), root.tag)
            passes = read_passes(os.path.join(dump, "passes.txt"))
            print(f"{DEVICE}: {STEPS} steps bit-identical; step graph {passes['step']}")
            if DEVICE == "cpu":
                self.assertEqual(passes["step"], PINNED, "launches per GPT step before and after each pass")
            else:
                # Other plugins may claim fewer fusions; the captured count and the passes
                # that do not depend on the plugin are the same.
                for name in ("captured", "dce", "fold", "cse"):
                    self.assertEqual(passes["step"][name], PINNED[name], name)
                self.assertLess(passes["step"]["fuse_elementwise"], passes["step"]["cse"])


if __name__ == "__main__":
    TRAINER, DEVICE, PLUGINS = sys.argv[1], sys.argv[2], sys.argv[3:]
    unittest.main(argv=[sys.argv[0], "-v"])
