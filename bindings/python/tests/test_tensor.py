"""catalyst.Tensor: creation, operators, ops, views and autograd, checked against numpy."""
import numpy as np
import pytest

import catalyst


def test_devices_and_names(cpu):
    names = [d.name for d in catalyst.devices()]
    assert cpu.name in names
    assert catalyst.device(cpu.name) == cpu
    assert cpu.kind == "cpu" and "f32" in cpu.dtypes
    assert cpu != "cpu:0"  # another type compares unequal instead of raising


def test_tensor_from_lists_and_arrays_keeps_values_and_dtypes(cpu):
    assert catalyst.tensor([1.5, 2.5]).dtype == catalyst.float32  # Python floats: float32, as in torch
    assert catalyst.tensor([1, 2]).dtype == catalyst.int64
    for dtype in (np.float32, np.float64, np.float16, np.int8, np.uint8, np.int32, np.int64, np.bool_):
        array = (np.arange(12).reshape(3, 4) % 2).astype(dtype)
        t = catalyst.tensor(array, device=cpu)
        assert t.shape == (3, 4) and t.numpy().dtype == dtype
        np.testing.assert_array_equal(t.numpy(), array)
    bf = catalyst.tensor([1.0, 2.5, -3.0], dtype="bfloat16")
    assert bf.dtype == catalyst.bfloat16
    np.testing.assert_array_equal(bf.numpy(), [1.0, 2.5, -3.0])


def test_operators_match_numpy():
    a_np = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], dtype=np.float32)
    b_np = np.array([0.5, 2.0, -1.0], dtype=np.float32)
    a, b = catalyst.tensor(a_np), catalyst.tensor(b_np)
    np.testing.assert_allclose((a + b).numpy(), a_np + b_np)
    np.testing.assert_allclose((a - b).numpy(), a_np - b_np)
    np.testing.assert_allclose((a * b).numpy(), a_np * b_np)
    np.testing.assert_allclose((a / b).numpy(), a_np / b_np)
    np.testing.assert_allclose((2.0 * a + 1).numpy(), 2 * a_np + 1)
    np.testing.assert_allclose((1 - a).numpy(), 1 - a_np)
    np.testing.assert_allclose((-a).numpy(), -a_np)
    np.testing.assert_allclose(abs(a).numpy(), np.abs(a_np))
    np.testing.assert_allclose((a ** 2).numpy(), a_np ** 2)
    np.testing.assert_allclose((a @ a.T).numpy(), a_np @ a_np.T, rtol=1e-6)
    np.testing.assert_array_equal((a > b).numpy(), a_np > b_np)
    np.testing.assert_array_equal((a == 4.0).numpy(), a_np == 4.0)
    np.testing.assert_array_equal((a <= b).numpy(), a_np <= b_np)


def test_ops_match_numpy():
    x_np = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    x = catalyst.tensor(x_np)
    np.testing.assert_allclose(catalyst.exp(x).numpy(), np.exp(x_np), rtol=1e-6)
    np.testing.assert_allclose(catalyst.log(catalyst.exp(x)).numpy(), x_np, atol=1e-6)
    np.testing.assert_allclose(catalyst.relu(x).numpy(), np.maximum(x_np, 0))
    e = np.exp(x_np - x_np.max(axis=1, keepdims=True))
    np.testing.assert_allclose(catalyst.softmax(x).numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(catalyst.sum(x, axis=0).numpy(), x_np.sum(axis=0), rtol=1e-6)
    np.testing.assert_allclose(x.mean(axis=(0, 1), keepdims=True).numpy(), x_np.mean(keepdims=True), atol=1e-7)
    np.testing.assert_allclose(x.max(axis=1).numpy(), x_np.max(axis=1))
    np.testing.assert_array_equal(catalyst.argmax(x, axis=1).numpy(), x_np.argmax(axis=1))
    assert catalyst.gelu(x).shape == (3, 4)
    np.testing.assert_array_equal(catalyst.cast(x, "int32").numpy(), x_np.astype(np.int32))
    np.testing.assert_allclose(catalyst.op("add", x, x).numpy(), 2 * x_np)  # the generic call


def test_views_share_storage_and_index_like_numpy():
    x_np = np.arange(24, dtype=np.float32).reshape(4, 6)
    x = catalyst.tensor(x_np)
    np.testing.assert_array_equal(x[1].numpy(), x_np[1])
    np.testing.assert_array_equal(x[1:3, ::2].numpy(), x_np[1:3, ::2])
    np.testing.assert_array_equal(x[-1, 2:].numpy(), x_np[-1, 2:])
    np.testing.assert_array_equal(x.T.numpy(), x_np.T)
    np.testing.assert_array_equal(x.reshape(6, 4).numpy(), x_np.reshape(6, 4))
    assert not x.T.is_contiguous and x.T.contiguous().is_contiguous


def test_autograd_gradient_matches_the_formula():
    x_np = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    x = catalyst.tensor(x_np, requires_grad=True)
    loss = catalyst.sum(catalyst.exp(x) * x)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x_np) * (1 + x_np), rtol=1e-6)
    loss.backward()  # gradients add up until zero_grad
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x_np) * (1 + x_np), rtol=1e-6)
    x.zero_grad()
    assert x.grad is None
    assert not x.detach().requires_grad
    with catalyst.no_grad():
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad


def test_release_drops_the_handle():
    t = catalyst.tensor([1.0, 2.0])
    t.release()
    assert t.released
    t.release()  # twice is harmless, as ctl_tensor_release(NULL) is
