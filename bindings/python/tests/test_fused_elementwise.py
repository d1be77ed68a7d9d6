"""ABI 1.5's fused elementwise op through catalyst.op: program=[(op, a[, b]), ...] builds
ctl_fused_elementwise_attrs; the result equals the separate ops bit for bit, and bad
programs raise the ABI's error (or TypeError for a malformed step)."""
import numpy as np
import pytest

import catalyst


def test_exp_times_x_program_equals_the_separate_ops(cpu):
    x = catalyst.tensor([0.5, -1.25, 2.0, 0.0, -3.5], device=cpu)
    assert catalyst.op_name(288) == "fused_elementwise"
    fused = catalyst.op("fused_elementwise", x, program=[("exp", 0), ("mul", 1, 0)])
    eager = (catalyst.exp(x) * x).numpy()
    np.testing.assert_array_equal(fused.numpy(), eager)
    # Ops by id too, and two inputs: r2 = r0 - r1, r3 = r2 * r2.
    y = catalyst.tensor([1.0, 1.0, 1.0, 1.0, 1.0], device=cpu)
    squared = catalyst.op(288, x, y, program=[(33, 0, 1), ("mul", 2, 2)])
    np.testing.assert_array_equal(squared.numpy(), ((x - y) * (x - y)).numpy())


def test_bad_programs_raise():
    x = catalyst.tensor([1.0, 2.0])
    with pytest.raises(catalyst.InvalidArgumentError):
        catalyst.op("fused_elementwise", x, program=[("exp", 0), ("mul", 1, 5)])  # r5 unwritten
    with pytest.raises(catalyst.InvalidArgumentError):
        catalyst.op("fused_elementwise", x, program=[("exp", 0)] * 17)  # past 16 instructions
    with pytest.raises(TypeError):
        catalyst.op("fused_elementwise", x, program=[("exp",)])
    with pytest.raises(TypeError):
        catalyst.op("fused_elementwise", x, registers=[0])
