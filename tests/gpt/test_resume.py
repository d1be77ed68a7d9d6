"""Resuming is exact: training 200 steps in one run gives bit-identical weights and
optimizer state to training 100 steps, being killed (SIGKILL) right after the checkpoint,
and resuming for the remaining 100.

usage: test_resume.py CATALYST_TRAIN_GPT PLUGIN_FILE
"""
import os
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gpt_vs_torch import read_safetensors  # noqa: E402

TRAINER = None
PLUGIN = None
SMALL = ["--context", "16", "--width", "32", "--heads", "2", "--layers", "2", "--batch", "4",
         "--steps", "200", "--checkpoint-every", "100", "--eval-every", "50", "--eval-batches", "2",
         "--warmup", "20", "--sample-length", "20", "--quiet"]


def corpus(path):
    words = ("the quick brown fox jumps over the lazy dog while catalyst learns to write "
             "fortunes about computers and cookies and the art of programming").split()
    lines = []
    for i in range(400):
        lines.append(" ".join(words[(i * 7 + j * 3) % len(words)] for j in range(8 + i % 5)))
    with open(path, "w") as f:
        f.write("\n".join(lines))


class Resume(unittest.TestCase):
    def run_trainer(self, data, out, *extra, expect_kill=False):
        env = dict(os.environ, CATALYST_PLUGINS=PLUGIN)
        proc = subprocess.run([TRAINER, "--data", data, "--out", out, "--device", "cpu", *SMALL, *extra],
                              env=env, capture_output=True, text=True, errors="replace")
        if expect_kill:
            self.assertEqual(proc.returncode, -signal.SIGKILL, proc.stderr)
        else:
            self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc

    def test_killed_and_resumed_run_matches_an_uninterrupted_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "text.txt")
            corpus(data)
            whole, split = os.path.join(tmp, "whole"), os.path.join(tmp, "split")
            self.run_trainer(data, whole)
            self.run_trainer(data, split, "--kill-after-step", "100", expect_kill=True)
            half, meta = read_safetensors(os.path.join(split, "checkpoint.safetensors"))
            self.assertEqual(meta["step"], "100")
            self.run_trainer(data, split, "--resume")
            a, meta_a = read_safetensors(os.path.join(whole, "checkpoint.safetensors"))
            b, meta_b = read_safetensors(os.path.join(split, "checkpoint.safetensors"))
            self.assertEqual(meta_a["step"], "200")
            self.assertEqual(meta_a, meta_b)
            self.assertEqual(sorted(a), sorted(b))
            for name in a:
                self.assertEqual(a[name].tobytes(), b[name].tobytes(), f"{name} differs after resuming")
            # And training did something: the weights moved from the step-100 checkpoint.
            moved = [n for n in a if n.startswith("wte") and a[n].tobytes() != half[n].tobytes()]
            self.assertTrue(moved)


if __name__ == "__main__":
    TRAINER, PLUGIN = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
