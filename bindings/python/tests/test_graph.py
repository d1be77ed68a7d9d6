"""catalyst.Graph (ABI 1.5): a captured exp(x) * x gives the eager result at every launch,
reads during a capture raise, an exception in the block ends the capture, and an AdamW
node's attributes can be replaced between launches. On the CPU device (conftest)."""
import numpy as np
import pytest

import catalyst


def assert_not_capturing():
    with pytest.raises(catalyst.FailedPreconditionError):
        catalyst.capture_next_node()


def test_captured_exp_times_x_equals_eager(cpu, tmp_path):
    first = np.array([[0.5, -1.25, 2.0], [0.0, -3.5, 1.0e-3]], dtype=np.float32)
    x = catalyst.tensor(first, device=cpu)
    with catalyst.Graph() as g:
        assert catalyst.capture_next_node() == 0
        y = catalyst.exp(x) * x
    assert_not_capturing()
    stats = g.stats()
    assert (stats["captured_nodes"], stats["nodes"], stats["runs"]) == (2, 2, 0), stats

    g.optimize("fuse_elementwise")
    report = g.pass_report()
    assert [r["name"] for r in report] == ["fuse_elementwise"]
    assert (report[0]["nodes_before"], report[0]["nodes_after"]) == (2, 1), report
    with pytest.raises(catalyst.FailedPreconditionError):
        g.optimize()

    g.launch()
    eager = (catalyst.exp(x) * x).numpy()
    assert np.any(eager != 0)
    np.testing.assert_array_equal(y.numpy(), eager)  # fused equals the separate ops bit for bit

    catalyst.op("copy", catalyst.tensor(first * -0.75 + 0.25, device=cpu), into=[x])
    g.launch()
    eager2 = (catalyst.exp(x) * x).numpy()
    assert np.any(eager2 != eager)
    np.testing.assert_array_equal(y.numpy(), eager2)
    assert g.stats()["runs"] == 2

    dot = tmp_path / "graph.dot"
    g.write_dot(str(dot))
    assert "digraph" in dot.read_text()
    with pytest.raises(catalyst.InvalidArgumentError):
        g.write_dot(str(dot), stage="neither")


def test_reading_a_tensor_while_capturing_raises(cpu):
    x = catalyst.tensor([1.0, 2.0, 3.0], device=cpu)
    with catalyst.Graph() as g:
        with pytest.raises(catalyst.FailedPreconditionError):
            x.numpy()
        with pytest.raises(catalyst.FailedPreconditionError):
            x.tolist()
    assert g.stats()["captured_nodes"] == 0
    assert x.tolist() == [1.0, 2.0, 3.0]


def test_an_exception_in_the_block_ends_the_capture(cpu):
    x = catalyst.tensor([1.0, -1.0], device=cpu)
    g = catalyst.Graph()
    with pytest.raises(ZeroDivisionError):
        with g:
            catalyst.exp(x)
            1 / 0
    assert_not_capturing()
    assert x.tolist() == [1.0, -1.0]
    # The abandoned capture kept nothing, so the same Graph can capture again, once.
    with g:
        catalyst.exp(x)
    assert g.stats()["captured_nodes"] == 1
    with pytest.raises(catalyst.FailedPreconditionError):
        with g:
            pass


ADAMW = dict(beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01)


def test_set_node_attrs_updates_an_adamw_node(cpu):
    grad, start = [0.5, -0.25, 1.0, -2.0], [1.0, 2.0, -1.0, 0.5]

    def state():
        return [catalyst.tensor(v, device=cpu) for v in (grad, start, [0.0] * 4, [0.0] * 4)]

    g_, p, m, v = state()
    ge, pe, me, ve = state()
    with catalyst.Graph() as graph:
        node = catalyst.capture_next_node()
        catalyst.op("adamw_step", g_, into=[p, m, v], lr=0.1, step=1, **ADAMW)
    graph.launch()
    catalyst.op("adamw_step", ge, into=[pe, me, ve], lr=0.1, step=1, **ADAMW)
    assert p.tolist() == pe.tolist()

    with pytest.raises(catalyst.InvalidArgumentError):
        graph.set_node_attrs(node, "adamw_step", lr=0.05, step=0, **ADAMW)
    graph.set_node_attrs(node, "adamw_step", lr=0.05, step=2, **ADAMW)
    graph.launch()
    catalyst.op("adamw_step", ge, into=[pe, me, ve], lr=0.05, step=2, **ADAMW)
    assert (p.tolist(), m.tolist(), v.tolist()) == (pe.tolist(), me.tolist(), ve.tolist())

    # The captured attrs launched twice would give another value.
    gs, ps, ms, vs = state()
    for _ in range(2):
        catalyst.op("adamw_step", gs, into=[ps, ms, vs], lr=0.1, step=1, **ADAMW)
    assert p.tolist() != ps.tolist()
