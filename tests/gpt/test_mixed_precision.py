"""`catalyst train-gpt --precision bf16|f16`: mixed-precision training of the small GPT
tracks f32, f16's dynamic loss scaling skips an overflowed step and lowers the scale, and
a bf16 (or f16) run killed and resumed ends bit-identical to an uninterrupted one.

usage: test_mixed_precision.py CATALYST_TRAIN_GPT PLUGIN_FILE
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_gpt_vs_torch import read_safetensors  # noqa: E402
from test_resume import corpus  # noqa: E402

TRAINER = None
PLUGIN = None
SMALL = ["--context", "16", "--width", "32", "--heads", "2", "--layers", "2", "--batch", "4",
         "--eval-every", "25", "--eval-batches", "2", "--warmup", "10", "--sample-length", "20", "--quiet"]

# The largest gap allowed between a 16-bit run's training loss and f32's at any of the 50
# steps, in nats. Both runs see the same batches from the same initial weights; the gap is
# rounding in the products (bf16 keeps 8 significant bits, f16 11) carried through the
# updates. Measured on the CPU plugin: bf16 at most 0.0011, f16 at most 0.00011 (while the
# loss falls from 5.5 to 3.0). The bounds leave room for another device's summation order,
# not for a wrong gradient: with the gradient stopped at the cast the gap exceeds 0.1.
BOUND = {"bf16": 0.02, "f16": 0.005}


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class MixedPrecision(unittest.TestCase):
    def run_trainer(self, data, out, *extra, expect_kill=False):
        env = dict(os.environ, CATALYST_PLUGINS=PLUGIN)
        proc = subprocess.run([TRAINER, "--data", data, "--out", out, "--device", "cpu", *SMALL, *extra],
                              env=env, capture_output=True, text=True, errors="replace")
        if expect_kill:
            self.assertEqual(proc.returncode, -signal.SIGKILL, proc.stderr)
        else:
            self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.data = os.path.join(self.tmp.name, "text.txt")
        corpus(self.data)

    def tearDown(self):
        self.tmp.cleanup()

    def test_bf16_and_f16_track_f32_for_50_steps(self):
        logs = {}
        for precision in ("f32", "bf16", "f16"):
            out = os.path.join(self.tmp.name, precision)
            self.run_trainer(self.data, out, "--steps", "50", "--precision", precision)
            logs[precision] = read_log(os.path.join(out, "log.jsonl"))
            self.assertEqual([r["step"] for r in logs[precision]], list(range(1, 51)))
        f32 = [r["loss"] for r in logs["f32"]]
        self.assertLess(f32[-1], f32[0] - 1.0, "f32 did not learn, so tracking it proves nothing")
        for precision, bound in BOUND.items():
            losses = [r["loss"] for r in logs[precision]]
            gaps = [abs(a - b) for a, b in zip(losses, f32)]
            worst = max(range(50), key=lambda i: gaps[i])
            print(f"{precision}: largest gap to f32 {gaps[worst]:.5f} nats at step {worst + 1} (bound {bound})")
            self.assertLessEqual(gaps[worst], bound,
                                 f"{precision} step {worst + 1}: loss {losses[worst]} vs f32 {f32[worst]}")
            # The flag did change the arithmetic: a run that ignored it would match f32 exactly.
            self.assertGreater(max(gaps), 0.0, f"{precision} computed exactly what f32 did")
            self.assertAlmostEqual(logs[precision][-1]["val_loss"], logs["f32"][-1]["val_loss"], delta=bound)
        # Only f16 scales the loss; at its initial scale nothing overflowed in this run.
        self.assertNotIn("loss_scale", logs["bf16"][0])
        self.assertTrue(all(r["loss_scale"] == 65536 and r["skipped_steps"] == 0 for r in logs["f16"]))

    def test_weights_are_cast_once_per_step(self):
        # 2 layers of qkv, proj, fc and mlp proj (a weight and a bias each), the tied
        # embedding and the causal mask: 18 copies a step, however often each is used (the
        # qkv weight three times, the embedding twice) and in however many micro-batches.
        for micro in ("1", "2"):
            out = os.path.join(self.tmp.name, "m" + micro)
            self.run_trainer(self.data, out, "--steps", "3", "--precision", "bf16", "--micro-batches", micro)
            self.assertEqual([r["weight_casts"] for r in read_log(os.path.join(out, "log.jsonl"))], [18, 18, 18])

    def test_f16_overflow_skips_the_step_and_lowers_the_scale(self):
        out = os.path.join(self.tmp.name, "f16")
        self.run_trainer(self.data, out, "--steps", "20", "--precision", "f16", "--inject-overflow-at-step", "8")
        log = read_log(os.path.join(out, "log.jsonl"))
        before, hit, after = log[6], log[7], log[8]
        self.assertEqual(hit["step"], 8)
        self.assertFalse(before["skipped"])
        self.assertTrue(hit["skipped"], hit)
        self.assertIsNone(hit["grad_norm"])  # inf or NaN, written as null
        self.assertEqual(hit["loss_scale"], before["loss_scale"] / 2)
        self.assertEqual(hit["skipped_steps"], 1)
        self.assertFalse(after["skipped"])
        self.assertEqual(log[-1]["skipped_steps"], 1)
        # The skipped step changed no weight: the optimizer stepped 19 times in 20 steps.
        _, meta = read_safetensors(os.path.join(out, "checkpoint.safetensors"))
        self.assertEqual((meta["precision"], meta["step"], meta["optimizer_steps"]), ("f16", "20", "19"))
        self.assertEqual(float(meta["loss_scale"]), hit["loss_scale"])

    def resume_matches(self, precision, *extra):
        whole, split = os.path.join(self.tmp.name, "whole"), os.path.join(self.tmp.name, "split")
        args = ["--steps", "60", "--checkpoint-every", "30", "--precision", precision, *extra]
        self.run_trainer(self.data, whole, *args)
        self.run_trainer(self.data, split, *args, "--kill-after-step", "30", expect_kill=True)
        half, meta = read_safetensors(os.path.join(split, "checkpoint.safetensors"))
        self.assertEqual((meta["step"], meta["precision"]), ("30", precision))
        self.run_trainer(self.data, split, *args, "--resume")
        a, meta_a = read_safetensors(os.path.join(whole, "checkpoint.safetensors"))
        b, meta_b = read_safetensors(os.path.join(split, "checkpoint.safetensors"))
        self.assertEqual(meta_a["step"], "60")
        self.assertEqual(meta_a, meta_b)
        self.assertEqual(sorted(a), sorted(b))
        for name in a:
            self.assertEqual(a[name].dtype.name, "float32", f"{name}: master weights and moments stay f32")
            self.assertEqual(a[name].tobytes(), b[name].tobytes(), f"{name} differs after resuming under {precision}")
        self.assertTrue([n for n in a if a[n].tobytes() != half[n].tobytes()], "training did not move the weights")
        # The log of the resumed run has every step once, with the same losses.
        self.assertEqual([r["loss"] for r in read_log(os.path.join(whole, "log.jsonl"))],
                         [r["loss"] for r in read_log(os.path.join(split, "log.jsonl"))])
        return split, args

    def test_bf16_resume_is_bit_exact_and_keeps_its_precision(self):
        split, args = self.resume_matches("bf16")
        # Resuming under another precision is refused, naming the field, and changes nothing.
        before = read_bytes(os.path.join(split, "checkpoint.safetensors"))
        env = dict(os.environ, CATALYST_PLUGINS=PLUGIN)
        args = [a if a != "bf16" else "f32" for a in args]
        proc = subprocess.run([TRAINER, "--data", self.data, "--out", split, "--device", "cpu", *SMALL, *args,
                               "--steps", "70", "--resume"], env=env, capture_output=True, text=True)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("'precision' is 'bf16'", proc.stderr)
        self.assertEqual(read_bytes(os.path.join(split, "checkpoint.safetensors")), before)

    def test_f16_resume_is_bit_exact_with_its_loss_scale(self):
        # A skipped step before the checkpoint: the scale and the skip count resume too.
        split, _ = self.resume_matches("f16", "--inject-overflow-at-step", "12")
        _, meta = read_safetensors(os.path.join(split, "checkpoint.safetensors"))
        self.assertEqual((meta["skipped_steps"], meta["optimizer_steps"]), ("1", "59"))


if __name__ == "__main__":
    TRAINER, PLUGIN = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
