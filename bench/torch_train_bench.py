#!/usr/bin/python3
"""PyTorch twin of catalyst-train-bench: the same two models, the same steps, the same JSON line.

usage: torch_train_bench.py mlp|gpt [--steps N] [--warmup W] [--seed S] [--threads T] [--autocast bf16]

  mlp  784-512-512-10 with ReLU, cross-entropy, SGD (momentum 0.9, lr 0.01), batch 128, f32
  gpt  the GPT of bindings/cpp/include/catalyst/nn.hpp (vocab 256, context 128, width 128,
       4 heads, 4 layers; pre-norm blocks, fused qkv Linear, causal softmax attention written
       out, GELU-tanh MLP of 4x width, tied embeddings), batch 16, AdamW (lr 3e-4, betas
       0.9/0.95, weight decay 0.1 on matrices only, as optim.hpp does), gradients clipped to 1.0

--autocast bf16 runs the forward and the loss under torch.autocast("cpu", dtype=torch.bfloat16)
(PyTorch's mixed precision: matmuls in bf16, the optimizer on f32 weights), for compare.py's
mixed-precision row.

Every step: forward, loss, backward, (clip), optimizer step, zero_grad(set_to_none=True) (a
Catalyst zero_grad drops the gradient too), and loss.item(). Runs on the CPU with
torch.set_num_threads(2) unless --threads says otherwise. Inputs are random (fixed seed)
and made before the first step.
"""
import argparse
import json
import math
import os
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCHES = 4  # distinct batches made before the clock starts; the steps cycle through them


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                 nn.Linear(512, 10))

    def forward(self, x):
        return self.net(x)


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x, mask):
        B, T, C = x.shape
        H, D = self.heads, C // self.heads
        q, k, v = (t.reshape(B, T, H, D).transpose(1, 2) for t in self.qkv(x).split(C, dim=-1))
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(D)) + mask  # [B, H, T, T]
        y = torch.softmax(att, dim=-1) @ v  # [B, H, T, D]
        return self.proj(y.transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.mlp_proj = nn.Linear(4 * width, width)

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.mlp_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab=256, context=128, width=128, heads=4, layers=4):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(context, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        mask = torch.triu(torch.full((context, context), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask)
        for name, p in self.named_parameters():  # nn.hpp's initialisation, roughly
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif p.dim() >= 2:
                std = 0.02 / math.sqrt(2.0 * layers) if name.endswith(("attn.proj.weight", "mlp_proj.weight")) else 0.02
                nn.init.normal_(p, std=std)

    def forward(self, ids):
        T = ids.shape[1]
        x = self.wte(ids) + self.wpe.weight[:T]
        mask = self.mask[:T, :T]
        for block in self.blocks:
            x = block(x, mask)
        return self.ln_f(x) @ self.wte.weight.T  # tied embeddings


def loaded_blas():
    """The BLAS and LAPACK libraries this process has mapped (torch's matrix products run there)."""
    found = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                name = os.path.basename(path)
                if any(k in name for k in ("blas", "mkl", "blis")) and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def parse():
    p = argparse.ArgumentParser(description="Training steps per second of two small models in PyTorch.")
    p.add_argument("model", choices=["mlp", "gpt"])
    p.add_argument("--steps", type=int, default=20, help="timed steps (default 20)")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps first (default 2)")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    p.add_argument("--autocast", choices=["bf16"], help="forward and loss under torch.autocast on the CPU")
    a = p.parse_args()
    if a.steps < 1 or a.warmup < 0:
        p.error("--steps must be at least 1 and --warmup at least 0")
    return a


def main():
    a = parse()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    gen = torch.Generator().manual_seed(a.seed)
    if a.model == "mlp":
        batch, per_step, unit = 128, 128, "samples_per_second"
        model = MLP()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        data = [(torch.randn(batch, 784, generator=gen), torch.randint(0, 10, (batch,), generator=gen))
                for _ in range(BATCHES)]
        clip = None
    else:
        batch, context, vocab = 16, 128, 256
        per_step, unit = batch * context, "tokens_per_second"
        model = GPT(vocab, context)
        params = list(model.parameters())
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW(groups, lr=3e-4, betas=(0.9, 0.95), eps=1e-8)
        data = [(torch.randint(0, vocab, (batch, context), generator=gen),
                 torch.randint(0, vocab, (batch, context), generator=gen)) for _ in range(BATCHES)]
        clip = params

    def step(n):
        x, y = data[n % BATCHES]
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.autocast == "bf16"):
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_(clip, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.item()

    first_loss = last_loss = None
    for n in range(a.warmup):
        loss = step(n)
        first_loss = loss if first_loss is None else first_loss
    times = []
    for n in range(a.warmup, a.warmup + a.steps):
        t0 = time.perf_counter()
        last_loss = step(n)
        times.append(time.perf_counter() - t0)
        first_loss = last_loss if first_loss is None else first_loss
    median = statistics.median(times)
    print(json.dumps({
        "framework": "pytorch", "model": a.model, "autocast": a.autocast or "none", "device": f"torch {torch.__version__} cpu, {a.threads} threads",
        "blas": loaded_blas(), "parameters": sum(p.numel() for p in model.parameters()), "batch": batch,
        "steps": a.steps, "warmup": a.warmup, "median_step_seconds": median,
        "min_step_seconds": min(times), "max_step_seconds": max(times), "steps_per_second": 1.0 / median,
        unit: per_step / median, "first_loss": first_loss, "last_loss": last_loss}), flush=True)


if __name__ == "__main__":
    main()
