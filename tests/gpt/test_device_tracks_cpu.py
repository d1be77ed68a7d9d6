"""Training on another device follows the CPU device's loss curve: the same small GPT,
data and seed, trained on the CPU plugin and on DEVICE, must give losses that agree step
by step within a small relative tolerance (the devices round differently, so the curves
drift apart slowly; they must not diverge), and the device's loss must really fall.

usage: test_device_tracks_cpu.py CATALYST_TRAIN_GPT DEVICE PLUGIN_FILE...
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_resume import corpus  # noqa: E402

TRAINER = None
DEVICE = None
PLUGINS = []
STEPS = 120
SMALL = ["--context", "16", "--width", "32", "--heads", "2", "--layers", "2", "--batch", "4",
         "--steps", str(STEPS), "--checkpoint-every", "1000", "--eval-every", "40", "--eval-batches", "2",
         "--warmup", "20", "--sample-length", "20", "--quiet"]
# Per-step losses may differ by rounding that grows over the run; 2% relative is far
# above what rounding gives in 120 steps and far below what a wrong kernel gives.
TOLERANCE = 0.02


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class DeviceTracksCpu(unittest.TestCase):
    def train(self, data, out, device):
        env = dict(os.environ, CATALYST_PLUGINS=":".join(PLUGINS))
        proc = subprocess.run([TRAINER, "--data", data, "--out", out, "--device", device, *SMALL],
                              env=env, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 0, f"training on {device} failed:\n{proc.stderr}")
        return read_log(os.path.join(out, "log.jsonl"))

    def test_loss_curves_agree(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "text.txt")
            corpus(data)
            cpu = self.train(data, os.path.join(tmp, "cpu"), "cpu")
            other = self.train(data, os.path.join(tmp, "other"), DEVICE)
            self.assertEqual(len(cpu), STEPS)
            self.assertEqual(len(other), STEPS)
            worst = 0.0
            for a, b in zip(cpu, other):
                self.assertEqual(a["step"], b["step"])
                self.assertTrue(math.isfinite(b["loss"]), f"step {b['step']}: loss {b['loss']}")
                relative = abs(a["loss"] - b["loss"]) / abs(a["loss"])
                worst = max(worst, relative)
                self.assertLess(relative, TOLERANCE,
                                f"step {a['step']}: cpu loss {a['loss']}, {DEVICE} loss {b['loss']}")
                if "val_loss" in a:
                    self.assertLess(abs(a["val_loss"] - b["val_loss"]) / abs(a["val_loss"]), TOLERANCE)
            self.assertLess(other[-1]["loss"], 0.8 * other[0]["loss"], "the loss on the device did not fall")
            print(f"{DEVICE}: {STEPS} steps, first loss {other[0]['loss']:.4f}, last {other[-1]['loss']:.4f}, "
                  f"worst relative difference to cpu {worst:.2e}")


if __name__ == "__main__":
    TRAINER, DEVICE, PLUGINS = sys.argv[1], sys.argv[2], sys.argv[3:]
    unittest.main(argv=[sys.argv[0], "-v"])
