"""DLPack both ways with numpy and torch: zero copy on the CPU device (the consumer's data
pointer is the producer's), strides kept, versioned and legacy capsules, and BufferError
(or a copy, when asked) for a device whose memory the host cannot read."""
import numpy as np
import pytest
import torch

import catalyst


def test_numpy_from_catalyst_is_zero_copy(cpu):
    t = catalyst.tensor(np.arange(12, dtype=np.float32).reshape(3, 4), device=cpu)
    assert t.__dlpack_device__() == (1, 0)  # kDLCPU
    arr = np.from_dlpack(t)  # read-only in numpy 1.24; torch's view is writable
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == arr.ctypes.data
    tt[1, 2] = -7.0  # the same memory: Catalyst and numpy see the write
    assert t.numpy()[1, 2] == -7.0 and arr[1, 2] == -7.0


def test_numpy_round_trip_keeps_the_data_pointer():
    source = np.arange(20, dtype=np.float32).reshape(4, 5)
    t = catalyst.from_dlpack(source)
    back = np.from_dlpack(t)
    assert back.ctypes.data == source.ctypes.data
    np.testing.assert_array_equal(back, source)


def test_torch_round_trip_keeps_the_data_pointer():
    source = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t = catalyst.from_dlpack(source)
    back = torch.from_dlpack(t)
    assert back.data_ptr() == source.data_ptr()
    assert torch.equal(back, source)
    source[0, 0] = 42.0
    assert t.numpy()[0, 0] == 42.0


def test_strides_survive_both_ways():
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    for view in (base.T, base[::2], base[:, 1::3]):
        t = catalyst.from_dlpack(view)
        assert not t.is_contiguous
        assert t.strides == tuple(s // 4 for s in view.strides)
        back = np.from_dlpack(t)
        assert back.ctypes.data == view.ctypes.data and back.strides == view.strides
        np.testing.assert_array_equal(back, view)
    tt = torch.from_dlpack(catalyst.tensor(base).T)
    assert tuple(tt.stride()) == (1, 6)
    np.testing.assert_array_equal(tt.numpy(), base.T)


def test_versioned_and_legacy_capsules():
    t = catalyst.tensor([1.0, 2.0, 3.0])
    versioned = t.__dlpack__(max_version=(1, 0))
    legacy = t.__dlpack__()
    assert "dltensor_versioned" in repr(versioned) and '"dltensor"' in repr(legacy)
    for capsule in (versioned, legacy):
        np.testing.assert_array_equal(catalyst.from_dlpack(capsule).numpy(), [1.0, 2.0, 3.0])


def test_copy_true_gives_separate_memory():
    t = catalyst.tensor([1.0, 2.0])
    copy = torch.from_dlpack(catalyst.from_dlpack(t, copy=True))
    assert copy.data_ptr() != torch.from_dlpack(t).data_ptr()
    copy[0] = 9.0
    assert t.numpy()[0] == 1.0
    exported = torch.from_dlpack(t.__dlpack__(copy=True))  # the producer side's copy
    assert exported.data_ptr() != torch.from_dlpack(t).data_ptr()
    assert exported.tolist() == [1.0, 2.0]


def test_deleters_run_once_the_consumer_is_done():
    before = catalyst._live_exports()
    t = catalyst.tensor(np.ones(5, dtype=np.float32))
    arr = np.from_dlpack(t)
    unused = t.__dlpack__()
    assert catalyst._live_exports() == before + 2
    del arr, unused
    assert catalyst._live_exports() == before


def _not_host_visible():
    return [d for d in catalyst.devices() if not d.host_visible]


@pytest.mark.skipif(not _not_host_visible(), reason="no device without host-visible memory (no OpenCL device)")
def test_device_memory_the_host_cannot_read():
    device = _not_host_visible()[0]
    t = catalyst.tensor([1.0, 2.0, 3.0]).to(device)
    assert t.__dlpack_device__()[0] != 1
    for consume in (np.from_dlpack, torch.from_dlpack, lambda x: x.__dlpack__(copy=False)):
        with pytest.raises(BufferError) as info:
            consume(t)
        assert "not host-visible" in str(info.value)
        print(f"{device.name}: {info.value}")
    copied = catalyst.from_dlpack(t.__dlpack__(copy=True))
    assert copied.device.host_visible
    np.testing.assert_array_equal(np.from_dlpack(copied), [1.0, 2.0, 3.0])
    on_host = catalyst.from_dlpack(t.__dlpack__(dl_device=(1, 0)))
    np.testing.assert_array_equal(on_host.numpy(), [1.0, 2.0, 3.0])
