"""`catalyst train-gpt --resume` on a damaged checkpoint refuses it, exits 1, names the
checkpoint file, the field or tensor at fault and the value found, and changes nothing in
--out (the checkpoint and log.jsonl keep their bytes; no loss.png or sample.txt appears).

Each case trains a tiny GPT for 2 steps, damages its checkpoint one way, and resumes.

usage: test_damaged_checkpoint.py CATALYST_TRAIN_GPT PLUGIN_FILE
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_resume import corpus  # noqa: E402
from test_gpt_vs_torch import read_safetensors as read_checkpoint  # noqa: E402

TRAINER = None
PLUGIN = None
TINY = ["--context", "16", "--width", "32", "--heads", "2", "--layers", "2", "--batch", "4",
        "--checkpoint-every", "2", "--eval-every", "2", "--eval-batches", "1", "--warmup", "1",
        "--sample-length", "5", "--quiet", "--device", "cpu"]
NUMPY = {"F32": np.float32, "F64": np.float64, "I32": np.int32}
NAMES = {np.dtype(v): k for k, v in NUMPY.items()}


def write_checkpoint(path, tensors, meta):
    """A well-formed safetensors file: whatever is wrong with it is wrong with its contents."""
    header, offset, chunks = {"__metadata__": meta}, 0, []
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": NAMES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def snapshot(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            out[name] = f.read()
    return out


class DamagedCheckpoint(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.tmp.name, "text.txt")
        corpus(cls.data)
        cls.base = os.path.join(cls.tmp.name, "base")
        proc = cls.train(cls.base, "--steps", "2")
        assert proc.returncode == 0, proc.stderr
        cls.tensors, cls.meta = read_checkpoint(os.path.join(cls.base, "checkpoint.safetensors"))
        assert cls.meta["step"] == "2", cls.meta

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def train(cls, out, *extra):
        env = dict(os.environ, CATALYST_PLUGINS=PLUGIN)
        return subprocess.run([TRAINER, "--data", cls.data, "--out", out, *TINY, *extra],
                              env=env, capture_output=True, text=True, errors="replace", timeout=120)

    def resume_rejects(self, damage, *expected, extra=()):
        """Damages a copy of the step-2 checkpoint with damage(tensors, meta), resumes from it
        and requires exit status 1, every string of `expected` in the message, and --out
        unchanged. Returns the message."""
        out = tempfile.mkdtemp(dir=self.tmp.name)
        shutil.rmtree(out)
        shutil.copytree(self.base, out)
        for name in ("loss.png", "sample.txt"):
            if os.path.exists(os.path.join(out, name)):
                os.remove(os.path.join(out, name))
        tensors = {k: v.copy() for k, v in self.tensors.items()}
        meta = dict(self.meta)
        damage(tensors, meta)
        path = os.path.join(out, "checkpoint.safetensors")
        write_checkpoint(path, tensors, meta)
        before = snapshot(out)
        proc = self.train(out, "--resume", "--steps", "4", *extra)
        self.assertEqual(proc.returncode, 1, f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        message = proc.stderr.strip().splitlines()[-1]
        for text in (path, *expected):
            self.assertIn(text, message)
        self.assertEqual(snapshot(out), before, "a rejected checkpoint changed --out")
        return message

    # ---- the metadata ------------------------------------------------------------------------

    def test_step_that_is_negative_or_not_a_number(self):
        for bad in ("-5", "abc", "", "1e3", " 2", "99999999999999999999"):
            with self.subTest(step=bad):
                self.resume_rejects(lambda t, m: m.update(step=bad), "'step'", f"'{bad}'")

    def test_step_past_the_steps_to_train(self):
        self.resume_rejects(lambda t, m: m.update(step="1000", optimizer_steps="1000"), "'step'", "1000",
                            "--steps 4")

    def test_missing_fields(self):
        for key in ("step", "optimizer_steps", "sampler_state", "config", "dtype", "batch", "seed",
                    "train_bytes"):
            with self.subTest(field=key):
                self.resume_rejects(lambda t, m: m.pop(key), f"'{key}'", "missing")

    def test_optimizer_steps_that_disagree_with_step(self):
        self.resume_rejects(lambda t, m: m.update(optimizer_steps="7"), "'optimizer_steps'", "7")

    def test_sampler_state_out_of_range(self):
        state = int(self.meta["sampler_state"])
        for bad in ("-1", "18446744073709551616", "12345", str(state + 0x9E3779B97F4A7C15 * 1000 % 2**64)):
            with self.subTest(sampler_state=bad):
                self.resume_rejects(lambda t, m: m.update(sampler_state=bad), "'sampler_state'", bad)

    def test_a_checkpoint_of_another_model_or_run(self):
        self.resume_rejects(lambda t, m: None, "'config'", "width=32", "width=64", extra=("--width", "64"))
        self.resume_rejects(lambda t, m: None, "'batch'", "4", "--batch 8", extra=("--batch", "8"))
        self.resume_rejects(lambda t, m: None, "'seed'", "1337", "--seed 7", extra=("--seed", "7"))
        self.resume_rejects(lambda t, m: m.update(dtype="F16"), "'dtype'", "F16", "F32")
        self.resume_rejects(lambda t, m: m.update(train_bytes="5"), "'train_bytes'", "5")

    # ---- the tensors -------------------------------------------------------------------------

    def test_swapped_shape(self):
        def swap(t, m):
            t["wte.weight"] = t["wte.weight"].reshape(32, 256)
        self.resume_rejects(swap, "'wte.weight'", "[32, 256]", "[256, 32]")

    def test_wrong_dtype(self):
        def widen(t, m):
            t["h.0.ln1.bias"] = t["h.0.ln1.bias"].astype(np.float64)
        self.resume_rejects(widen, "'h.0.ln1.bias'", "F64", "F32")

    def test_missing_and_unknown_tensors(self):
        self.resume_rejects(lambda t, m: t.pop("adamw.m.ln_f.weight"), "'adamw.m.ln_f.weight'", "missing")
        self.resume_rejects(lambda t, m: t.update(extra=np.zeros(3, np.float32)), "'extra'", "not part")

    def test_non_finite_weights_and_moments(self):
        for name, value, words in (("wpe.weight", np.nan, "NaN"), ("h.1.mlp.fc.weight", np.inf, "inf"),
                                   ("adamw.m.wte.weight", -np.inf, "-inf"), ("adamw.v.h.0.attn.qkv.bias", np.nan,
                                                                             "NaN")):
            with self.subTest(tensor=name, value=value):
                def poison(t, m):
                    t[name].reshape(-1)[5] = value
                self.resume_rejects(poison, f"'{name}'", words, "element 5")

    def test_negative_second_moment(self):
        def negate(t, m):
            t["adamw.v.ln_f.bias"].reshape(-1)[3] = -0.25
        self.resume_rejects(negate, "'adamw.v.ln_f.bias'", "negative", "-0.25", "element 3")

    # ---- and the undamaged checkpoint still resumes ------------------------------------------

    def test_undamaged_checkpoint_resumes(self):
        out = os.path.join(self.tmp.name, "undamaged")
        shutil.copytree(self.base, out)
        write_checkpoint(os.path.join(out, "checkpoint.safetensors"), self.tensors, self.meta)
        proc = self.train(out, "--resume", "--steps", "4")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("resumed from", proc.stderr)
        self.assertEqual(read_checkpoint(os.path.join(out, "checkpoint.safetensors"))[1]["step"], "4")


class Options(unittest.TestCase):
    """Options the trainer must refuse before it trains (exit status 2)."""

    def refused(self, *args):
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "text.txt")
            corpus(data)
            env = dict(os.environ, CATALYST_PLUGINS=PLUGIN)
            proc = subprocess.run([TRAINER, "--data", data, "--out", os.path.join(tmp, "out"), *TINY, "--steps", "1",
                                   *args], env=env, capture_output=True, text=True, errors="replace", timeout=120)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        return proc.stderr

    def test_negative_kill_after_step(self):
        # It used to default to 0, so a run resumed at a negative step killed itself at 0.
        self.assertIn("--kill-after-step (-1) must not be negative", self.refused("--kill-after-step", "-1"))

    def test_numbers_with_trailing_characters(self):
        self.assertIn("bad value '12abc' for --steps", self.refused("--steps", "12abc"))


if __name__ == "__main__":
    TRAINER, PLUGIN = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
