"""`catalyst train-gpt --allow-fallback` on a device that lacks ops: the run gives the CPU's
losses bit for bit (the ops that fall back run on the CPU plugin, the rest on the same
kernels under another name), the placement report gives each fallen-back op's share of
the training time, and the trainer warns after the first step when more than 10% of the
ops fell back, and only then.

The device is the "lacking" test plugin (tests/plugins/plugin_lacking_op.cpp): the CPU
plugin answering UNSUPPORTED for the op ids in CATALYST_TEST_LACKING_OP.

usage: test_fallback_report.py CATALYST_TRAIN_GPT CPU_PLUGIN LACKING_PLUGIN
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_resume import corpus  # noqa: E402

TRAINER = None
PLUGINS = []
STEPS = 4
TINY = ["--context", "16", "--width", "32", "--heads", "2", "--layers", "2", "--batch", "4",
        "--steps", str(STEPS), "--eval-every", "1000", "--eval-batches", "1", "--warmup", "1",
        "--sample-length", "5", "--checkpoint-every", "1000", "--quiet"]
# Op ids of catalyst.h.
ADD, MUL, LAYER_NORM, CROSS_ENTROPY = 32, 34, 130, 192
SHARE = re.compile(r"^  (\w+) +fell back (\d+) times from lacking:0 to cpu:0, ([\d.]+)% of the training time$", re.M)
TOTAL = re.compile(r"^fallbacks: (\d+) of (\d+) ops during training \(([\d.]+)%\)", re.M)
WARNING = re.compile(r"^warning: (\d+) of the first step's (\d+) ops \(([\d.]+)%\) fell back to another device "
                     r"\(([^)]*)\)", re.M)


def read_losses(out):
    with open(os.path.join(out, "log.jsonl")) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]


class FallbackReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.tmp.name, "text.txt")
        corpus(cls.data)
        cls.cpu_losses = read_losses(cls.train("cpu", "cpu", None).out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def train(cls, name, device, lacking):
        out = os.path.join(cls.tmp.name, name)
        env = dict(os.environ, CATALYST_PLUGINS=":".join(PLUGINS))
        args = [TRAINER, "--data", cls.data, "--out", out, "--device", device, *TINY]
        if lacking is not None:
            env["CATALYST_TEST_LACKING_OP"] = ",".join(str(op) for op in lacking)
            args.append("--allow-fallback")
        proc = subprocess.run(args, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"train-gpt on {device} failed:\n{proc.stderr}")
        proc.out = out
        return proc

    def check_report(self, proc, lacking_names):
        shares = {m.group(1): (int(m.group(2)), float(m.group(3))) for m in SHARE.finditer(proc.stdout)}
        self.assertEqual(set(shares), set(lacking_names), proc.stdout)
        for name, (count, percent) in shares.items():
            self.assertGreaterEqual(count, STEPS, f"{name} falls back at least once a step")
            self.assertGreater(percent, 0.0, name)
            self.assertLess(percent, 100.0, name)
        total = TOTAL.search(proc.stdout)
        self.assertIsNotNone(total, proc.stdout)
        fallbacks, asked, percent = int(total.group(1)), int(total.group(2)), float(total.group(3))
        # The report's counts hold the final validation and the sample too; TOTAL is training's.
        self.assertLessEqual(fallbacks, sum(count for count, _ in shares.values()))
        self.assertGreater(asked, fallbacks)
        self.assertAlmostEqual(percent, 100.0 * fallbacks / asked, places=1)
        self.assertEqual(read_losses(proc.out), self.cpu_losses, "fallback gives the CPU's losses bit for bit")
        return fallbacks / asked

    def test_many_fallbacks_warn_after_the_first_step(self):
        # The backward forms of ops that fell back run where their forward ran: only the
        # forward ops fall back.
        proc = self.train("many", "lacking", [ADD, MUL, LAYER_NORM])
        fraction = self.check_report(proc, ["add", "mul", "layer_norm"])
        self.assertGreater(fraction, 0.10)
        warning = WARNING.search(proc.stderr)
        self.assertIsNotNone(warning, proc.stderr)
        self.assertGreater(float(warning.group(3)), 10.0)
        self.assertIn("layer_norm", warning.group(4))
        self.assertEqual(len(WARNING.findall(proc.stderr)), 1, "one warning, after the first step")
        self.assertIn("over the 10% the trainer warns at", proc.stdout)

    def test_a_few_fallbacks_are_reported_without_a_warning(self):
        proc = self.train("few", "lacking", [CROSS_ENTROPY])
        fraction = self.check_report(proc, ["cross_entropy"])
        self.assertLess(fraction, 0.10)
        self.assertIsNone(WARNING.search(proc.stderr), proc.stderr)


if __name__ == "__main__":
    TRAINER, PLUGINS = sys.argv[1], sys.argv[2:]
    unittest.main(argv=sys.argv[:1], verbosity=2)
