"""compare_mlp_losses.py — the check behind the mlp_examples_agree test.

Usage: compare_mlp_losses.py LOSS_DIR [--languages cpp,rust,go,python]

Every language's MLP example (examples/mlp/README.md) wrote its stdout to
LOSS_DIR/<language>.txt. Each file must hold exactly the lines `step <t> loss <value>` for
t = 1..50; every loss must equal the C++ reference's within 1e-6 relative. Prints, per
language, the largest relative difference and whether the sequence is bit-identical to
C++'s (as printed with 9 significant digits, which is exact for an f32); exits 1 naming
every language that is missing, empty, malformed or off.
"""
import argparse
import math
import os
import sys

STEPS = 50
TOLERANCE = 1e-6
REFERENCE = "cpp"


def read_losses(path):
    """The 50 losses of one file, or a string saying what is wrong with it."""
    if not os.path.exists(path):
        return f"missing ({path} does not exist: did its mlp_example test run?)"
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    if not any(line.strip() for line in lines):
        return f"empty ({path})"
    losses = []
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if len(fields) != 4 or fields[0] != "step" or fields[2] != "loss":
            return f"line {number} is {line!r}, not 'step <t> loss <value>'"
        if int(fields[1]) != len(losses) + 1:
            return f"line {number} is step {fields[1]}, expected step {len(losses) + 1}"
        value = float(fields[3])
        if not math.isfinite(value):
            return f"step {fields[1]} has loss {fields[3]}"
        losses.append(value)
    if len(losses) != STEPS:
        return f"{len(losses)} steps, expected {STEPS}"
    return losses


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("loss_dir")
    parser.add_argument("--languages", default="cpp,rust,go,python")
    args = parser.parse_args()
    languages = args.languages.split(",")
    results = {lang: read_losses(os.path.join(args.loss_dir, f"{lang}.txt")) for lang in languages}
    failures = [f"{lang}: {r}" for lang, r in results.items() if isinstance(r, str)]
    reference = results.get(REFERENCE)
    if isinstance(reference, list):
        print(f"{REFERENCE}: reference, first loss {reference[0]:.9g}, last {reference[-1]:.9g}")
        for lang in languages:
            losses = results[lang]
            if lang == REFERENCE or isinstance(losses, str):
                continue
            worst, worst_step = 0.0, 0
            for step, (mine, ref) in enumerate(zip(losses, reference), 1):
                relative = abs(mine - ref) / max(abs(ref), sys.float_info.min)
                if relative > worst:
                    worst, worst_step = relative, step
            identical = losses == reference
            verdict = "agrees" if worst <= TOLERANCE else "DIFFERS"
            print(f"{lang}: {verdict} with {REFERENCE}: max relative difference {worst:.3g}"
                  + (f" (step {worst_step})" if worst_step else "")
                  + f"; bit-identical: {'yes' if identical else 'no'}")
            if worst > TOLERANCE:
                failures.append(f"{lang}: step {worst_step} loss {losses[worst_step - 1]:.9g} vs {REFERENCE}'s "
                                f"{reference[worst_step - 1]:.9g} (relative {worst:.3g} > {TOLERANCE:g})")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
