"""Shared fixtures: the binding from the build tree (CTest puts it on PYTHONPATH) and its
CPU device (CTest sets CATALYST_DEVICE=cpu:0, so the default device is the CPU plugin's)."""
import pytest

import catalyst


@pytest.fixture
def cpu():
    device = catalyst.default_device()
    assert device.host_visible, f"the default device {device} should be the host-visible CPU device"
    return device
