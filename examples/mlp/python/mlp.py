"""The tiny MLP of examples/mlp/README.md on the Python binding; its losses must match the
C++ reference (examples/mlp/cpp/mlp.cpp) — the mlp_examples_agree test compares them.
Each step prints `step <t> loss <value>`; nothing else goes to stdout."""
import numpy as np

import catalyst

SAMPLES, FEATURES, HIDDEN, CLASSES, STEPS = 64, 4, 16, 3, 50


def features():
    x = np.empty((SAMPLES, FEATURES), dtype=np.float32)
    for i in range(SAMPLES):
        for j in range(FEATURES):
            x[i, j] = np.float32((7 * i + 3 * j) % 13 / 6.5 - 1.0)  # computed in double, rounded once
    return x


def labels():
    return np.array([((7 * i) % 13 + (7 * i + 9) % 13) % 3 for i in range(SAMPLES)], dtype=np.int32)


def weights(rows, cols, multiplier, modulus):
    w = np.empty((rows, cols), dtype=np.float32)
    for r in range(rows):
        for c in range(cols):
            w[r, c] = np.float32((multiplier * (cols * r + c)) % modulus / modulus * 0.8 - 0.4)
    return w


def main():
    device = catalyst.default_device()
    x = catalyst.tensor(features(), device=device)
    y = catalyst.tensor(labels(), device=device)
    w1 = catalyst.tensor(weights(FEATURES, HIDDEN, 37, 101), device=device, requires_grad=True)
    b1 = catalyst.zeros([HIDDEN], device=device).requires_grad_()
    w2 = catalyst.tensor(weights(HIDDEN, CLASSES, 53, 97), device=device, requires_grad=True)
    b2 = catalyst.zeros([CLASSES], device=device).requires_grad_()
    params = [w1, b1, w2, b2]
    state = [(catalyst.zeros(p.shape, device=device), catalyst.zeros(p.shape, device=device)) for p in params]

    for t in range(1, STEPS + 1):
        h = catalyst.relu(x @ w1 + b1)
        logits = h @ w2 + b2
        loss = catalyst.cross_entropy(logits, y)
        loss.backward()
        value = loss.item()
        for p, (exp_avg, exp_avg_sq) in zip(params, state):
            catalyst.op("adamw_step", p.grad, into=[p, exp_avg, exp_avg_sq], lr=0.01, beta1=0.9, beta2=0.999,
                        eps=1e-8, weight_decay=0.01, step=t)
        for p in params:
            p.zero_grad()
        print(f"step {t} loss {float(np.float32(value)):.9g}")


if __name__ == "__main__":
    main()
