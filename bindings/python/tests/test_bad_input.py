"""Bad input of every kind gets the Python exception its status code maps to, with the
ABI's message word for word (catalyst/_errors.py documents the mapping) — and never a
crash: every case runs in this one process."""
import ctypes
import datetime

import numpy as np
import pytest

import catalyst


def released():
    t = catalyst.tensor([1.0, 2.0])
    t.release()
    return t


def consumed_capsule():
    capsule = np.arange(3.0).__dlpack__()
    catalyst.from_dlpack(capsule)
    return capsule


A = None


def a():
    return catalyst.tensor(np.ones((2, 3), dtype=np.float32))


def leaf():
    return catalyst.tensor([1.0, 2.0], requires_grad=True)


# (name, call, exception class, text of the message). Classes from catalyst are checked
# exactly; each is also the built-in exception named beside it in catalyst/_errors.py.
CASES = [
    ("released tensor in an op", lambda: released() + a(), catalyst.InvalidArgumentError,
     "add: argument 'inputs[0]' is NULL"),
    ("released tensor exported through DLPack", lambda: released().__dlpack__(), catalyst.InvalidArgumentError,
     "argument 'tensor' is NULL"),
    ("released tensor read to host", lambda: released().numpy(), catalyst.InvalidArgumentError,
     "argument 'tensor' is NULL"),
    ("binary op on two dtypes", lambda: a() + catalyst.tensor([1]), catalyst.InvalidArgumentError,
     "add: inputs[1] is i64 but inputs[0] is f32; cast one first (no implicit promotion)"),
    ("shapes that do not broadcast", lambda: a() + catalyst.ones([4]), catalyst.InvalidArgumentError,
     "add: input 1 has size 4 on axis 1, which does not broadcast with size 3"),
    ("matmul inner dimensions", lambda: a() @ a(), catalyst.InvalidArgumentError,
     "matmul: inner dimensions differ"),
    ("matmul of a vector", lambda: catalyst.tensor([1.0]) @ catalyst.tensor([1.0]), catalyst.InvalidArgumentError,
     "matmul: inputs[0] has rank 1; matmul needs rank >= 2"),
    ("reduction axis out of range", lambda: a().sum(axis=5), catalyst.InvalidArgumentError,
     "sum: attrs->axes entry is 5, out of range for an input of rank 2"),
    ("softmax axis out of range", lambda: catalyst.softmax(a(), axis=3), catalyst.InvalidArgumentError,
     "softmax: attrs->axis is 3, out of range for an input of rank 2"),
    ("transpose axis out of range", lambda: a().transpose(0, 7), catalyst.InvalidArgumentError,
     "argument 'axis1' is 7, out of range for rank 2"),
    ("reshape to another element count", lambda: a().reshape(4, 2), catalyst.InvalidArgumentError,
     "shape has 8 elements but the tensor has 6"),
    ("slice step 0", lambda: a().slice(0, 0, 2, 0), catalyst.InvalidArgumentError,
     "argument 'step' is 0; it must be at least 1"),
    ("permute naming an axis twice", lambda: a().permute(0, 0), catalyst.InvalidArgumentError,
     "perm names axis 0 twice"),
    ("negative dimension", lambda: catalyst.zeros([-1]), catalyst.InvalidArgumentError,
     "shape[0] is -1; dimensions cannot be negative"),
    ("rank above 8", lambda: catalyst.zeros([1] * 9), catalyst.InvalidArgumentError,
     "rank of 'shape' is 9; at most 8 is supported"),
    ("integer tensor requiring a gradient", lambda: catalyst.tensor([1, 2]).requires_grad_(),
     catalyst.InvalidArgumentError, "tensor has dtype i64; only f32, f64, f16 and bf16 tensors can require gradients"),
    ("non-leaf requiring a gradient", lambda: (leaf() * 2).requires_grad_(), catalyst.InvalidArgumentError,
     "tensor was produced by a recorded op (it is not a leaf)"),
    ("backward from a non-scalar", lambda: (leaf() * 2).backward(), catalyst.InvalidArgumentError,
     "grad_output is NULL, which means 1, but the tensor has 2 elements"),
    ("float class ids", lambda: catalyst.cross_entropy(a(), a()), catalyst.InvalidArgumentError,
     "cross_entropy: inputs[1] (target) has dtype f32; class ids are i32 or i64"),
    ("float gather index", lambda: catalyst.gather(a(), a()), catalyst.InvalidArgumentError,
     "gather: inputs[1] (index) has dtype f32; it must be i32 or i64"),
    ("adamw step 0", lambda: catalyst.op("adamw_step", a(), into=[a(), a(), a()], lr=0.1, step=0),
     catalyst.InvalidArgumentError, "adamw_step: attrs->step is 0; the first update is step 1"),
    ("unknown op id", lambda: catalyst.op(9999, a()), catalyst.InvalidArgumentError,
     "argument 'op' is 9999, not a known ctl_op_id"),
    ("host buffer too small", lambda: a()._to_host(np.empty(2, np.float32)), catalyst.InvalidArgumentError,
     "argument 'dst_bytes' is 8 but the tensor has 24 bytes"),
    ("unknown device", lambda: catalyst.device("nosuch:0"), catalyst.NotFoundError,
     "argument 'name' (\"nosuch:0\") names no device; the devices are: "),
    # Checks the binding makes before any C call: plain Python exceptions, our own words.
    ("wrong Python type for a tensor", lambda: catalyst.exp("abc"), TypeError, "incompatible function arguments"),
    ("unknown dtype name", lambda: a().cast("complex64"), TypeError, "Catalyst has no dtype 'complex64'"),
    ("numpy dtype Catalyst lacks", lambda: catalyst.tensor(np.ones(2, np.complex64)), TypeError,
     "Catalyst has no dtype for numpy's complex64"),
    ("attribute the op does not have", lambda: catalyst.op("add", a(), a(), axis=1), TypeError,
     "op 'add' has no attribute 'axis'"),
    ("unknown op name", lambda: catalyst.op("nosuch", a()), ValueError, "no op named 'nosuch'"),
    ("index past the end", lambda: a()[5], IndexError, "index 5 is out of range for axis 0 of size 2"),
    ("item of many elements", lambda: a().item(), ValueError, "item() needs a tensor of one element"),
    ("foreign capsule", lambda: catalyst.from_dlpack(datetime.datetime_CAPI), TypeError,
     "not a DLPack capsule: its name is 'datetime.datetime_CAPI'"),
    ("already-consumed capsule", lambda: catalyst.from_dlpack(consumed_capsule()), ValueError,
     "this DLPack capsule was already consumed"),
    ("not DLPack at all", lambda: catalyst.from_dlpack(5), TypeError,
     "from_dlpack needs an object with __dlpack__ or a DLPack capsule, not int"),
    ("a stream for host memory", lambda: a().__dlpack__(stream=5), ValueError, "stream must be None"),
]


@pytest.mark.parametrize("name,call,exception,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_the_mapped_exception_with_the_abi_message(name, call, exception, message):
    with pytest.raises(exception) as info:
        call()
    assert type(info.value) is exception or not issubclass(exception, catalyst.Error), type(info.value)
    text = info.value.message if isinstance(info.value, catalyst.Error) else str(info.value)
    assert message in text, f"{name}: {text!r}"
    print(f"{name}: {type(info.value).__name__}: {text}")


def test_status_classes_are_the_builtin_exceptions_users_catch():
    assert issubclass(catalyst.InvalidArgumentError, ValueError)
    assert issubclass(catalyst.InvalidArgumentError, TypeError)
    assert issubclass(catalyst.UnsupportedError, NotImplementedError)
    assert issubclass(catalyst.OutOfMemoryError, MemoryError)
    assert issubclass(catalyst.NotFoundError, LookupError)
    assert issubclass(catalyst.OutOfRangeError, IndexError)
    assert issubclass(catalyst.DLPackError, BufferError)
    with pytest.raises(catalyst.Error) as info:
        catalyst.zeros([-1])
    assert info.value.code == "INVALID_ARGUMENT"
    assert str(info.value) == "INVALID_ARGUMENT: " + info.value.message


def test_out_of_memory_is_memory_error():
    # 2^61 bytes passes the shape checks (under 2^63) and no device can allocate it.
    with pytest.raises(MemoryError) as info:
        catalyst.empty([1 << 59], dtype="float32")
    assert isinstance(info.value, catalyst.OutOfMemoryError), type(info.value)
    print("out of memory:", info.value.message)


# ---- a DLPack capsule from a device Catalyst cannot read: built by hand with ctypes --------
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


def test_capsule_from_a_cuda_device_is_refused_and_stays_the_callers():
    storage = (ctypes.c_float * 4)()
    shape = (ctypes.c_int64 * 1)(4)
    deleted = []
    deleter = DELETER(lambda managed: deleted.append(1))
    managed = DLManagedTensor()
    managed.dl_tensor = DLTensor(ctypes.cast(storage, ctypes.c_void_p), DLDevice(2, 0), 1, DLDataType(2, 32, 1),
                                 shape, None, 0)  # kDLCUDA, float32
    managed.deleter = deleter
    capsule = _capsule_new(ctypes.addressof(managed), b"dltensor", None)
    with pytest.raises(catalyst.UnsupportedError) as info:
        catalyst.from_dlpack(capsule)
    assert isinstance(info.value, NotImplementedError)
    print("cuda capsule:", info.value.message)
    assert "device type 2" in info.value.message or "kDLCUDA" in info.value.message or "CUDA" in info.value.message
    # On failure the capsule is not consumed and Catalyst did not call the deleter.
    assert not deleted
    assert ctypes.pythonapi.PyCapsule_IsValid(ctypes.py_object(capsule), b"dltensor")
