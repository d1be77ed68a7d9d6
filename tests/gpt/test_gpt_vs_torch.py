"""A 2-layer GPT in Catalyst against the same model in PyTorch (Debian's python3-torch), in f64.

gpt_dump (a C++ program on the Catalyst C++ binding) writes the model's weights, a batch,
the loss and every parameter gradient to a safetensors file; this test rebuilds the model
in PyTorch from those weights, runs the same batch, and requires the loss and every
gradient to agree within 1e-5 relative (they agree far closer: both compute in f64).

usage: test_gpt_vs_torch.py GPT_DUMP PLUGIN_FILE  (runs gpt_dump on the reference and cpu devices)
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch
import torch.nn.functional as F

DTYPES = {"F64": np.float64, "F32": np.float32, "I64": np.int64, "I32": np.int32}


def read_safetensors(path):
    """Reads a safetensors file with numpy only (the format: u64 header size, JSON, data)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    meta = header.pop("__metadata__", {})
    data = blob[8 + n:]
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        arr = np.frombuffer(data[begin:end], dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
        tensors[name] = arr.copy()
    return tensors, meta


def torch_gpt_loss(p, ids, targets, heads, layers):
    """The GPT of bindings/cpp/include/catalyst/nn.hpp, written with torch ops."""
    B, T = ids.shape
    x = p["wte.weight"][ids] + p["wpe.weight"][:T]
    mask = torch.triu(torch.full((T, T), float("-inf"), dtype=torch.float64), diagonal=1)
    for i in range(layers):
        h = f"h.{i}"
        C = x.shape[-1]
        D = C // heads
        a = F.layer_norm(x, (C,), p[f"{h}.ln1.weight"], p[f"{h}.ln1.bias"], eps=1e-5)
        qkv = a @ p[f"{h}.attn.qkv.weight"] + p[f"{h}.attn.qkv.bias"]
        q, k, v = (qkv[..., j * C:(j + 1) * C].reshape(B, T, heads, D).transpose(1, 2) for j in range(3))
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(D)) + mask
        y = torch.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).reshape(B, T, C)
        x = x + (y @ p[f"{h}.attn.proj.weight"] + p[f"{h}.attn.proj.bias"])
        m = F.layer_norm(x, (C,), p[f"{h}.ln2.weight"], p[f"{h}.ln2.bias"], eps=1e-5)
        m = F.gelu(m @ p[f"{h}.mlp.fc.weight"] + p[f"{h}.mlp.fc.bias"], approximate="tanh")
        x = x + (m @ p[f"{h}.mlp.proj.weight"] + p[f"{h}.mlp.proj.bias"])
    x = F.layer_norm(x, (x.shape[-1],), p["ln_f.weight"], p["ln_f.bias"], eps=1e-5)
    logits = x @ p["wte.weight"].T
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class GptVsTorch(unittest.TestCase):
    dump = None
    plugin = None

    def check_device(self, device):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "gpt.safetensors")
            subprocess.run([self.dump, self.plugin, device, path], check=True)
            tensors, meta = read_safetensors(path)
        params = {k[len("param."):]: torch.tensor(v, requires_grad=True)
                  for k, v in tensors.items() if k.startswith("param.")}
        self.assertGreater(len(params), 10)
        loss = torch_gpt_loss(params, torch.tensor(tensors["ids"]), torch.tensor(tensors["targets"]),
                              int(meta["heads"]), int(meta["layers"]))
        loss.backward()
        catalyst_loss = float(tensors["loss"])
        self.assertLess(abs(catalyst_loss - loss.item()), 1e-5 * abs(loss.item()),
                        f"{device}: loss {catalyst_loss} vs torch {loss.item()}")
        for name, p in params.items():
            ours = tensors["grad." + name]
            theirs = p.grad.numpy()
            scale = max(np.abs(theirs).max(), 1e-12)
            err = np.abs(ours - theirs).max() / scale
            self.assertLess(err, 1e-5, f"{device}: gradient of {name} differs: max relative error {err:.2e}")

    def test_reference_device(self):
        self.check_device("reference")

    def test_cpu_device(self):
        self.check_device("cpu")


if __name__ == "__main__":
    GptVsTorch.dump, GptVsTorch.plugin = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1], verbosity=2)
