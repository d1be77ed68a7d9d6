"""The parts of catalyst.Tensor written in Python: conversion from and to numpy and Python
lists, indexing, printing. They call only the compiled methods, never the C ABI directly."""
import numpy as np

from . import _catalyst
from ._catalyst import Tensor

# numpy's dtype for each Catalyst dtype that has one (bfloat16 has none: numpy() widens it).
_NUMPY = {
    _catalyst.float32: np.float32, _catalyst.float64: np.float64, _catalyst.float16: np.float16,
    _catalyst.int8: np.int8, _catalyst.uint8: np.uint8, _catalyst.int32: np.int32,
    _catalyst.int64: np.int64, _catalyst.bool: np.bool_,
}


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of `data` (a numpy array, anything numpy.asarray takes,
    or a catalyst.Tensor) on `device` (default: catalyst.default_device()).

    dtype None keeps an array's dtype; Python floats become float32 and ints int64 (as in
    PyTorch). bfloat16 is made from float32 on the device."""
    if isinstance(data, Tensor):
        out = data.to(device if device is not None else data.device)
        if dtype is not None and _catalyst._dtype(dtype) != out.dtype:
            out = out.cast(dtype)
    else:
        if not isinstance(data, np.ndarray) and dtype is None:
            data = np.asarray(data)
            if data.dtype == np.float64:
                data = data.astype(np.float32)
        wanted = None if dtype is None else _catalyst._dtype(dtype)
        if wanted == _catalyst.bfloat16:
            out = _catalyst._from_buffer(np.ascontiguousarray(data, dtype=np.float32), _catalyst.float32, device)
            out = out.cast(_catalyst.bfloat16)
        else:
            array = np.ascontiguousarray(data, dtype=None if wanted is None else _NUMPY[wanted])
            if array.dtype.name not in ("float32", "float64", "float16", "int8", "uint8", "int32", "int64", "bool"):
                raise TypeError(f"Catalyst has no dtype for numpy's {array.dtype.name}")
            out = _catalyst._from_buffer(array, array.dtype, device)
    if requires_grad:
        out.requires_grad = True
    return out


def ones(shape, dtype=_catalyst.float32, device=None):
    return _catalyst.full(shape, 1.0, dtype, device)


def arange(count, dtype=_catalyst.float32, device=None, start=0.0, step=1.0):
    """count values start, start + step, ... (the arange op)."""
    out = _catalyst.empty([count], dtype, device)
    _catalyst.op("arange", into=[out], start=start, step=step)
    return out


def rand(shape, seed, offset=0, dtype=_catalyst.float32, device=None, low=0.0, high=1.0):
    """Uniform in [low, high) from the counter-based generator: one seed, one result on every device."""
    out = _catalyst.empty(shape, dtype, device)
    _catalyst.op("random_uniform", into=[out], seed=seed, offset=offset, low=low, high=high)
    return out


def randn(shape, seed, offset=0, dtype=_catalyst.float32, device=None, mean=0.0, std=1.0):
    out = _catalyst.empty(shape, dtype, device)
    _catalyst.op("random_normal", into=[out], seed=seed, offset=offset, mean=mean, std=std)
    return out


def _numpy(self):
    """A numpy copy of the values (bfloat16 widened to float32). For a zero-copy view of a
    tensor on a host-visible device use numpy.from_dlpack(t)."""
    source = self.cast(_catalyst.float32) if self.dtype == _catalyst.bfloat16 else self
    out = np.empty(source.shape, dtype=_NUMPY[source.dtype])
    source._to_host(out)
    return out


def _item(self):
    if self.numel() != 1:
        raise ValueError(f"item() needs a tensor of one element, not one of shape {self.shape}")
    return self.numpy().reshape(()).item()


def _bool(self):
    if self.numel() != 1:
        raise ValueError("the truth value of a tensor with more than one element is ambiguous")
    return bool(self.item())


def _index(self, key):
    """Integers and slices (step >= 1) per axis, as views; an integer drops its axis."""
    if not isinstance(key, tuple):
        key = (key,)
    out, axis, drop = self, 0, []
    for k in key:
        if isinstance(k, slice):
            start, stop, step = k.start, k.stop, 1 if k.step is None else k.step
            size = out.shape[axis] if axis < out.ndim else 0
            out = out.slice(axis, 0 if start is None else start, size if stop is None else stop, step)
        elif isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            size = out.shape[axis] if axis < out.ndim else 0
            i = int(k) + size if k < 0 else int(k)
            if not 0 <= i < size:
                raise IndexError(f"index {int(k)} is out of range for axis {axis} of size {size}")
            out = out.slice(axis, i, i + 1, 1)
            drop.append(axis)
        else:
            raise TypeError(f"tensors are indexed by ints and slices, not {type(k).__name__}")
        axis += 1
    if drop:
        out = out.reshape([d for i, d in enumerate(out.shape) if i not in drop])
    return out


def _repr(self):
    if self.released:
        return "catalyst.Tensor(<released>)"
    grad = ", requires_grad=True" if self.requires_grad else ""
    values = np.array2string(self.numpy(), separator=", ", prefix="catalyst.tensor(")
    return (f"catalyst.tensor({values}, dtype={self.dtype.name}, "
            f"device='{self.device.name}'{grad})")


Tensor.numpy = _numpy
Tensor.item = _item
Tensor.tolist = lambda self: self.numpy().tolist()
Tensor.__bool__ = _bool
Tensor.__float__ = lambda self: float(self.item())
Tensor.__int__ = lambda self: int(self.item())
Tensor.__getitem__ = _index
Tensor.__repr__ = _repr
Tensor.__array__ = lambda self, dtype=None: self.numpy() if dtype is None else self.numpy().astype(dtype)
Tensor.T = property(lambda self: self.permute(list(range(self.ndim))[::-1]))
Tensor.size = lambda self, axis=None: self.shape if axis is None else self.shape[axis]
