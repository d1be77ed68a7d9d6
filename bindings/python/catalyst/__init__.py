"""Catalyst for Python: tensors, ops, autograd and DLPack over Catalyst's C ABI.

    import catalyst
    x = catalyst.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    loss = catalyst.sum(catalyst.exp(x) * x)
    loss.backward()
    print(x.grad.numpy())

Everything goes through the C ABI (catalyst.h) and adds no semantics of its own: dtypes are
never promoted implicitly, errors are the ABI's (see catalyst._errors for which exception
each status code raises), and the process has one runtime, created on first use with the
default plugin discovery (CATALYST_PLUGINS, CATALYST_PLUGIN_PATH, the installed plugins;
CATALYST_DEVICE picks the default device).
"""
import contextlib

from . import _errors
from ._errors import (DeviceLostError, DLPackError, Error, FailedPreconditionError, InternalError,
                      InvalidArgumentError, NotFoundError, OutOfMemoryError, OutOfRangeError,
                      UnsupportedError)
from ._catalyst import *  # noqa: F401,F403 - the compiled half: Tensor, ops, devices, dtypes
from ._catalyst import Tensor, _live_exports, _set_grad_enabled, abi_version, from_dlpack  # noqa: F401
from ._tensor import arange, ones, rand, randn, tensor  # noqa: F401


@contextlib.contextmanager
def no_grad():
    """Within the block, ops record nothing for autograd (evaluation, optimizer steps)."""
    previous = _set_grad_enabled(False)
    try:
        yield
    finally:
        _set_grad_enabled(previous)


def set_grad_enabled(enabled):
    """Turns recording on or off; returns the previous setting."""
    return _set_grad_enabled(bool(enabled))
