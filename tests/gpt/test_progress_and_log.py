"""What `catalyst train-gpt` shows and records while it trains: the progress line has no
validation loss until the first evaluation (never "val nan"), log.jsonl records a
validation loss every --eval-every steps, a resumed run's log holds each step once, and
loss.png draws the validation loss as a line across the run, not as lone points.

usage: test_progress_and_log.py CATALYST_TRAIN_GPT PLUGIN_FILE
"""
import json
import math
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_resume import corpus  # noqa: E402

TRAINER = None
PLUGIN = None
TINY = ["--context", "16", "--width", "32", "--heads", "2", "--layers", "2", "--batch", "4",
        "--eval-batches", "1", "--warmup", "1", "--sample-length", "5", "--device", "cpu"]
VALIDATION_RGB = (0xD6, 0x27, 0x28)  # the validation line's colour in train_gpt.cpp's write_plot


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def png_pixels(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit palette, RGB or RGBA PNG."""
    with open(path, "rb") as f:
        blob = f.read()
    assert blob[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, palette = 8, b"", None
    while pos < len(blob):
        (length,) = struct.unpack(">I", blob[pos:pos + 4])
        kind, body = blob[pos + 4:pos + 8], blob[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = [tuple(body[i:i + 3]) for i in range(0, len(body), 3)]
        elif kind == b"IDAT":
            idat += body
    assert depth == 8 and interlace == 0 and color in (2, 3, 6), (depth, color, interlace)
    channels = {2: 3, 3: 1, 6: 4}[color]
    raw, stride = zlib.decompress(idat), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        if color == 3:
            rows.append([palette[b] for b in line])
        else:
            rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows


class ProgressAndLog(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.data = os.path.join(self.tmp.name, "text.txt")
        corpus(self.data)

    def tearDown(self):
        self.tmp.cleanup()

    def train(self, out, *extra, killed=False):
        env = dict(os.environ, CATALYST_PLUGINS=PLUGIN)
        proc = subprocess.run([TRAINER, "--data", self.data, "--out", out, *TINY, *extra],
                              env=env, capture_output=True, text=True, errors="replace", timeout=300)
        self.assertEqual(proc.returncode, -signal.SIGKILL if killed else 0, proc.stderr)
        return proc

    def test_progress_line_omits_validation_until_there_is_one(self):
        # Not a terminal, so one line every --eval-every / 2 steps: steps 2, 4, 6 and 8.
        proc = self.train(os.path.join(self.tmp.name, "out"), "--steps", "8", "--eval-every", "4")
        lines = {int(l.split()[1].split("/")[0]): l for l in proc.stderr.splitlines() if l.startswith("step ")}
        self.assertEqual(sorted(lines), [2, 4, 6, 8], proc.stderr)
        for step, line in lines.items():
            self.assertNotIn("nan", line.lower())
            self.assertEqual(" val " in line, step >= 4, line)

    def test_log_records_validation_every_eval_every_steps(self):
        out = os.path.join(self.tmp.name, "out")
        self.train(out, "--steps", "10", "--eval-every", "3", "--quiet")
        records = read_log(os.path.join(out, "log.jsonl"))
        self.assertEqual([r["step"] for r in records], list(range(1, 11)))
        self.assertEqual([r["step"] for r in records if "val_loss" in r], [3, 6, 9, 10])
        for r in records:
            self.assertTrue(math.isfinite(r.get("val_loss", 0.0)), r)

    def test_resumed_log_holds_each_step_once(self):
        # Killed at step 6, two steps after the checkpoint at 4: the resumed run trains 5 and
        # 6 again, and the log must not hold them twice.
        out = os.path.join(self.tmp.name, "out")
        args = ("--steps", "8", "--checkpoint-every", "4", "--eval-every", "2", "--quiet")
        self.train(out, *args, "--kill-after-step", "6", killed=True)
        self.assertEqual([r["step"] for r in read_log(os.path.join(out, "log.jsonl"))], list(range(1, 7)))
        self.train(out, *args, "--resume")
        records = read_log(os.path.join(out, "log.jsonl"))
        self.assertEqual([r["step"] for r in records], list(range(1, 9)))
        self.assertEqual([r["step"] for r in records if "val_loss" in r], [2, 4, 6, 8])

    def test_final_validation_reads_the_whole_split(self):
        # The validation split (the last 10% of the file, rounded) is one repeated byte, so
        # every window holds the same text: the whole split's mean must equal the sampled
        # windows' to the digits printed, and it must cover every complete window of
        # --context (16) bytes. A resumed run at its end evaluates the same model again and
        # must print the same figures.
        with open(self.data) as f:
            text = f.read()
        filler = len(text) // 9 + 50
        with open(self.data, "w") as f:
            f.write(text + "a" * filler)
        validation = round((len(text) + filler) * 0.1)
        out = os.path.join(self.tmp.name, "out")
        args = ("--steps", "3", "--quiet")
        pattern = re.compile(r"^validation loss ([\d.]+) nats over the whole validation split \((\d+) bytes; "
                             r"predicting byte frequencies: [\d.]+\); ([\d.]+) on the 4 sampled windows", re.M)
        first = pattern.search(self.train(out, *args).stdout)
        self.assertIsNotNone(first)
        self.assertEqual(int(first.group(2)), (validation - 1) // 16 * 16)
        self.assertEqual(first.group(1), first.group(3))
        self.assertTrue(math.isfinite(float(first.group(1))))
        again = pattern.search(self.train(out, *args, "--resume").stdout)
        self.assertEqual(again.groups(), first.groups())

    @unittest.skipUnless(shutil.which("gnuplot"), "gnuplot is not installed")
    def test_plot_draws_validation_as_a_line(self):
        # Validation at steps 2, 4, ..., 12: its line spans 10 of the 11 steps on the x axis,
        # so its colour shows in most columns of the image. Lone points and the legend's
        # sample would colour a few dozen.
        out = os.path.join(self.tmp.name, "out")
        self.train(out, "--steps", "12", "--eval-every", "2", "--quiet")
        width, _, rows = png_pixels(os.path.join(out, "loss.png"))
        columns = {x for row in rows for x, rgb in enumerate(row) if rgb == VALIDATION_RGB}
        self.assertGreater(len(columns), width // 2, f"the validation colour is in {len(columns)} of {width} columns")


if __name__ == "__main__":
    TRAINER, PLUGIN = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
