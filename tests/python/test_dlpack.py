"""DLPack interchange between Catalyst (through ctypes on libcatalyst.so) and numpy / torch.

Checks, in both directions: zero copy (the consumer's data pointer is the producer's
DLTensor data + byte_offset), non-contiguous strides kept (arr.T, arr[::2], torch .t()),
values equal, and the producer's deleter called exactly once (a counting wrapper around the
DLManagedTensor's deleter), including for a capsule that is never consumed.

Environment (set by CTest): CATALYST_TEST_LIBRARY = path of libcatalyst.so;
CATALYST_TEST_CPU_PLUGIN = the CPU plugin (empty: the reference device is used).
Run with /usr/bin/python3 (numpy and torch come from Debian there).
"""
import ctypes
import gc
import os
import unittest

import numpy as np

try:
    import torch
    import torch.utils.dlpack
except ImportError:  # pragma: no cover - Debian's python3-torch is expected
    torch = None

LIB = ctypes.CDLL(os.environ.get("CATALYST_TEST_LIBRARY", "libcatalyst.so"))
CPU_PLUGIN = os.environ.get("CATALYST_TEST_CPU_PLUGIN", "")

c_status_p = ctypes.c_void_p


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

CTL_MAX_RANK = 8


class RuntimeOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("next", ctypes.c_void_p),
                ("plugin_paths", ctypes.POINTER(ctypes.c_char_p)), ("plugin_path_count", ctypes.c_size_t),
                ("disable_discovery", ctypes.c_bool), ("log_fn", ctypes.c_void_p),
                ("log_user_data", ctypes.c_void_p), ("log_level", ctypes.c_int),
                ("log_level_set", ctypes.c_bool), ("enable_reference_device", ctypes.c_bool)]


class DeviceInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("next", ctypes.c_void_p), ("name", ctypes.c_char_p),
                ("vendor", ctypes.c_char_p), ("driver_version", ctypes.c_char_p), ("plugin_name", ctypes.c_char_p),
                ("kind", ctypes.c_int), ("memory_total", ctypes.c_uint64), ("memory_free", ctypes.c_uint64),
                ("compute_units", ctypes.c_uint32), ("pci_bus_id", ctypes.c_char_p), ("numa_node", ctypes.c_int32),
                ("uuid", ctypes.c_uint8 * 16), ("has_uuid", ctypes.c_bool), ("dtype_mask", ctypes.c_uint32),
                ("host_visible", ctypes.c_bool), ("index", ctypes.c_uint32)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("next", ctypes.c_void_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_size_t), ("shape", ctypes.c_int64 * CTL_MAX_RANK),
                ("strides", ctypes.c_int64 * CTL_MAX_RANK), ("offset", ctypes.c_int64), ("numel", ctypes.c_int64),
                ("contiguous", ctypes.c_bool), ("device", ctypes.c_void_p)]


def _proto(name, restype, *argtypes):
    f = getattr(LIB, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


vp, pvp = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
ctl_status_get_message = _proto("ctl_status_get_message", ctypes.c_char_p, vp)
ctl_status_free = _proto("ctl_status_free", None, vp)
ctl_runtime_create = _proto("ctl_runtime_create", c_status_p, ctypes.POINTER(RuntimeOptions), pvp)
ctl_runtime_release = _proto("ctl_runtime_release", None, vp)
ctl_runtime_device_count = _proto("ctl_runtime_device_count", ctypes.c_size_t, vp)
ctl_runtime_device = _proto("ctl_runtime_device", c_status_p, vp, ctypes.c_size_t, pvp)
ctl_device_get_info = _proto("ctl_device_get_info", c_status_p, vp, ctypes.POINTER(DeviceInfo))
ctl_tensor_from_host = _proto("ctl_tensor_from_host", c_status_p, vp, ctypes.c_int, ctypes.c_size_t,
                              ctypes.POINTER(ctypes.c_int64), vp, ctypes.c_size_t, pvp)
ctl_tensor_to_host = _proto("ctl_tensor_to_host", c_status_p, vp, vp, ctypes.c_size_t)
ctl_tensor_release = _proto("ctl_tensor_release", None, vp)
ctl_tensor_transpose = _proto("ctl_tensor_transpose", c_status_p, vp, ctypes.c_int64, ctypes.c_int64, pvp)
ctl_tensor_slice = _proto("ctl_tensor_slice", c_status_p, vp, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                          ctypes.c_int64, pvp)
ctl_tensor_get_info = _proto("ctl_tensor_get_info", c_status_p, vp, ctypes.POINTER(TensorInfo))
ctl_tensor_to_dlpack = _proto("ctl_tensor_to_dlpack", c_status_p, vp, ctypes.POINTER(ctypes.POINTER(DLManagedTensor)))
ctl_tensor_from_dlpack = _proto("ctl_tensor_from_dlpack", c_status_p, vp, ctypes.POINTER(DLManagedTensor), pvp)

PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [vp, ctypes.c_char_p, vp]
PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
PyCapsule_IsValid.restype = ctypes.c_int
PyCapsule_IsValid.argtypes = [vp, ctypes.c_char_p]
PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
PyCapsule_GetPointer.restype = vp
PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
PyCapsule_SetName = ctypes.pythonapi.PyCapsule_SetName
PyCapsule_SetName.restype = ctypes.c_int
PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
CTL_DTYPE_F32 = 0
kDLCPU = 1


def check(status):
    if status:
        message = ctl_status_get_message(status).decode()
        ctl_status_free(status)
        raise RuntimeError(message)


# ---- deleters: a counting wrapper around any DLManagedTensor's deleter ---------------------
class DeleterCounter:
    """Replaces managed.deleter with a wrapper that counts calls and then runs the original."""

    def __init__(self, managed_ptr):
        self.calls = 0
        self.managed = managed_ptr
        # Copy the address: a function pointer read from a struct field aliases the field.
        address = ctypes.cast(managed_ptr.contents.deleter, vp).value
        self.original = DELETER(address) if address else None

        @DELETER
        def counting(self_ptr):
            self.calls += 1
            if self.original:
                self.original(self_ptr)

        self.wrapper = counting  # keep the ctypes callback alive
        managed_ptr.contents.deleter = counting


# PyCapsule_GetPointer taking a raw PyObject* (the destructor gets no Python object).
_capsule_pointer_raw = ctypes.PYFUNCTYPE(vp, vp, ctypes.c_char_p)(("PyCapsule_GetPointer", ctypes.pythonapi))


# The capsule destructor: call the deleter only when the capsule was not consumed (its name
# is still "dltensor"; a consumer renames it "used_dltensor").
@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    if PyCapsule_IsValid(capsule, b"dltensor"):
        managed = ctypes.cast(_capsule_pointer_raw(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor))
        if managed.contents.deleter:
            managed.contents.deleter(managed)


class Exported:
    """A Catalyst tensor seen through the DLPack protocol (__dlpack__ / __dlpack_device__)."""

    def __init__(self, tensor):
        managed = ctypes.POINTER(DLManagedTensor)()
        check(ctl_tensor_to_dlpack(tensor, ctypes.byref(managed)))
        self.managed = managed
        self.counter = DeleterCounter(managed)
        dl = managed.contents.dl_tensor
        self.address = (dl.data or 0) + dl.byte_offset
        self.strides = tuple(dl.strides[i] for i in range(dl.ndim))
        self.shape = tuple(dl.shape[i] for i in range(dl.ndim))

    def __dlpack_device__(self):
        return (kDLCPU, 0)

    def __dlpack__(self, stream=None, **kwargs):  # noqa: ARG002 - host memory has no stream
        return PyCapsule_New(ctypes.cast(self.managed, vp), b"dltensor",
                             ctypes.cast(_capsule_destructor, vp))


class CatalystTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        opts = RuntimeOptions()
        opts.struct_size = ctypes.sizeof(RuntimeOptions)  # the ABI's size is its prefix; this is >= it
        paths = (ctypes.c_char_p * 1)(CPU_PLUGIN.encode())
        opts.plugin_paths = paths
        opts.plugin_path_count = 1 if CPU_PLUGIN else 0
        opts.disable_discovery = True
        opts.enable_reference_device = True
        runtime = ctypes.c_void_p()
        check(ctl_runtime_create(ctypes.byref(opts), ctypes.byref(runtime)))
        cls.runtime = runtime
        want = b"cpu" if CPU_PLUGIN else b"reference"
        cls.device = None
        for i in range(ctl_runtime_device_count(runtime)):
            device = ctypes.c_void_p()
            check(ctl_runtime_device(runtime, i, ctypes.byref(device)))
            info = DeviceInfo()
            info.struct_size = ctypes.sizeof(DeviceInfo)
            check(ctl_device_get_info(device, ctypes.byref(info)))
            if info.plugin_name == want:
                cls.device = device
        assert cls.device, "no %s device" % want.decode()

    @classmethod
    def tearDownClass(cls):
        ctl_runtime_release(cls.runtime)

    def tensor_from(self, array):
        array = np.ascontiguousarray(array, dtype=np.float32)
        shape = (ctypes.c_int64 * max(array.ndim, 1))(*array.shape)
        tensor = ctypes.c_void_p()
        check(ctl_tensor_from_host(self.device, CTL_DTYPE_F32, array.ndim, shape, array.ctypes.data, array.nbytes,
                                   ctypes.byref(tensor)))
        self.addCleanup(ctl_tensor_release, tensor)
        return tensor

    def values(self, tensor, shape):
        out = np.empty(shape, dtype=np.float32)
        check(ctl_tensor_to_host(tensor, out.ctypes.data, out.nbytes))
        return out

    def info(self, tensor):
        info = TensorInfo()
        info.struct_size = ctypes.sizeof(TensorInfo)
        check(ctl_tensor_get_info(tensor, ctypes.byref(info)))
        return info

    def view(self, function, tensor, *args):
        out = ctypes.c_void_p()
        check(function(tensor, *args, ctypes.byref(out)))
        self.addCleanup(ctl_tensor_release, out)
        return out

    def import_capsule(self, capsule):
        """ctl_tensor_from_dlpack on a consumer-side capsule; returns (tensor, counter)."""
        managed = ctypes.cast(PyCapsule_GetPointer(capsule, b"dltensor"), ctypes.POINTER(DLManagedTensor))
        counter = DeleterCounter(managed)
        tensor = ctypes.c_void_p()
        check(ctl_tensor_from_dlpack(self.device, managed, ctypes.byref(tensor)))
        PyCapsule_SetName(capsule, b"used_dltensor")  # consumed: Catalyst owns it now
        return tensor, counter, managed.contents.dl_tensor


class CatalystToNumpy(CatalystTestCase):
    def test_zero_copy_values_and_single_delete(self):
        src = np.arange(12, dtype=np.float32).reshape(3, 4)
        exported = Exported(self.tensor_from(src))
        arr = np.from_dlpack(exported)
        self.assertEqual(arr.ctypes.data, exported.address)
        np.testing.assert_array_equal(arr, src)
        self.assertEqual(exported.counter.calls, 0)
        del arr
        gc.collect()
        self.assertEqual(exported.counter.calls, 1)

    def test_non_contiguous_strides_kept(self):
        src = np.arange(12, dtype=np.float32).reshape(3, 4)
        t = self.tensor_from(src)
        for name, view, expected in (
                ("transposed", self.view(ctl_tensor_transpose, t, 0, 1), src.T),
                ("sliced [:, 1::2]", self.view(ctl_tensor_slice, t, 1, 1, 4, 2), src[:, 1::2])):
            with self.subTest(name):
                exported = Exported(view)
                arr = np.from_dlpack(exported)
                self.assertEqual(arr.ctypes.data, exported.address)
                self.assertEqual(arr.strides, tuple(4 * s for s in exported.strides))
                self.assertEqual(arr.strides, expected.strides)
                np.testing.assert_array_equal(arr, expected)
                del arr
                gc.collect()
                self.assertEqual(exported.counter.calls, 1)

    def test_unconsumed_capsule_deletes_once(self):
        exported = Exported(self.tensor_from(np.ones(5)))
        capsule = exported.__dlpack__()
        del capsule
        gc.collect()
        self.assertEqual(exported.counter.calls, 1)


class NumpyToCatalyst(CatalystTestCase):
    def test_zero_copy_values_and_single_delete(self):
        arr = np.arange(20, dtype=np.float32).reshape(4, 5)
        t, counter, dl = self.import_capsule(arr.__dlpack__())
        self.assertEqual(dl.data + dl.byte_offset, arr.ctypes.data)
        np.testing.assert_array_equal(self.values(t, (4, 5)), arr)
        arr[1, 2] = -7.0  # the same memory
        self.assertEqual(self.values(t, (4, 5))[1, 2], -7.0)
        again = Exported(t)  # never handed to a consumer: we call its deleter ourselves
        self.assertEqual(again.address, arr.ctypes.data)
        again.managed.contents.deleter(again.managed)
        self.assertEqual(again.counter.calls, 1)
        self.assertEqual(counter.calls, 0)
        ctl_tensor_release(t)
        self.assertEqual(counter.calls, 1)

    def test_non_contiguous_strides_kept(self):
        base = np.arange(24, dtype=np.float32).reshape(4, 6)
        for name, arr in (("arr.T", base.T), ("arr[::2]", base[::2]), ("arr[:, 1::3]", base[:, 1::3])):
            with self.subTest(name):
                t, counter, dl = self.import_capsule(arr.__dlpack__())
                info = self.info(t)
                self.assertEqual(tuple(info.strides[:info.rank]), tuple(s // 4 for s in arr.strides))
                self.assertFalse(info.contiguous)
                self.assertEqual(dl.data + dl.byte_offset, arr.ctypes.data)
                np.testing.assert_array_equal(self.values(t, arr.shape), arr)
                ctl_tensor_release(t)
                self.assertEqual(counter.calls, 1)


@unittest.skipIf(torch is None, "torch is not installed")
class CatalystToTorch(CatalystTestCase):
    def test_zero_copy_values_strides_and_single_delete(self):
        src = np.arange(12, dtype=np.float32).reshape(3, 4)
        t = self.tensor_from(src)
        for name, tensor, expected in (("contiguous", t, src),
                                       ("transposed", self.view(ctl_tensor_transpose, t, 0, 1), src.T)):
            with self.subTest(name):
                exported = Exported(tensor)
                tt = torch.utils.dlpack.from_dlpack(exported)
                self.assertEqual(tt.data_ptr(), exported.address)
                self.assertEqual(tuple(tt.stride()), exported.strides)
                np.testing.assert_array_equal(tt.numpy(), expected)
                del tt
                gc.collect()
                self.assertEqual(exported.counter.calls, 1)


@unittest.skipIf(torch is None, "torch is not installed")
class TorchToCatalyst(CatalystTestCase):
    def test_zero_copy_values_strides_and_single_delete(self):
        base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        for name, tt in (("contiguous", base), ("t()", base.t()), ("[:, ::2]", base[:, ::2])):
            with self.subTest(name):
                t, counter, dl = self.import_capsule(torch.utils.dlpack.to_dlpack(tt))
                self.assertEqual(dl.data + dl.byte_offset, tt.data_ptr())
                info = self.info(t)
                self.assertEqual(tuple(info.strides[:info.rank]), tuple(tt.stride()))
                np.testing.assert_array_equal(self.values(t, tuple(tt.shape)), tt.numpy())
                ctl_tensor_release(t)
                self.assertEqual(counter.calls, 1)

    def test_values_outlive_the_torch_handle(self):
        tt = torch.arange(1000, dtype=torch.float32)
        capsule = torch.utils.dlpack.to_dlpack(tt)
        t, counter, _ = self.import_capsule(capsule)
        # The DLManagedTensor keeps the ATen storage alive, not the Python object: the values
        # stay readable through Catalyst after the capsule and the torch handle are gone, and
        # torch's deleter runs exactly once, when Catalyst releases the last tensor.
        del capsule, tt
        gc.collect()
        np.testing.assert_array_equal(self.values(t, (1000,)), np.arange(1000, dtype=np.float32))
        self.assertEqual(counter.calls, 0)
        ctl_tensor_release(t)
        self.assertEqual(counter.calls, 1)

if __name__ == "__main__":
    unittest.main()
