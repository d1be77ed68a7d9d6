"""No leak over 100k DLPack exchanges each way: the producer's deleter runs exactly once per
exchange (Catalyst's export counter and the numpy array's reference count come back to
where they started), and neither Python's heap (tracemalloc) nor the process (RSS) grows by
more than a bound far below what one leaked buffer per exchange would cost."""
import gc
import os
import sys
import tracemalloc

import numpy as np
import torch

import catalyst

EXCHANGES = 100_000
# One leaked 1 KiB tensor per exchange would be ~100 MiB; allocator noise is a few MiB.
RSS_BOUND = 16 << 20
HEAP_BOUND = 1 << 20


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def measure(name, exchange):
    for _ in range(1000):  # warm-up: allocator pools and caches settle
        exchange()
    gc.collect()
    exports, rss = catalyst._live_exports(), rss_bytes()
    tracemalloc.start()
    heap = tracemalloc.get_traced_memory()[0]
    for _ in range(EXCHANGES):
        exchange()
    gc.collect()
    heap_growth = tracemalloc.get_traced_memory()[0] - heap
    tracemalloc.stop()
    rss_growth = rss_bytes() - rss
    live = catalyst._live_exports() - exports
    print(f"{name}: {EXCHANGES} exchanges: RSS {rss_growth / 1024:+.0f} KiB, Python heap {heap_growth / 1024:+.1f} KiB, "
          f"live exports {live:+d}")
    assert live == 0
    assert rss_growth < RSS_BOUND, rss_growth
    assert heap_growth < HEAP_BOUND, heap_growth


def test_catalyst_to_numpy_does_not_leak():
    def exchange():
        t = catalyst.zeros([256])  # 1 KiB of storage, freed only if numpy's deleter call releases it
        arr = np.from_dlpack(t)
        del t
        assert arr.shape == (256,)

    measure("catalyst -> numpy", exchange)


def test_catalyst_to_torch_does_not_leak():
    def exchange():
        tt = torch.from_dlpack(catalyst.zeros([256]))
        assert tt.shape == (256,)

    measure("catalyst -> torch", exchange)


def test_numpy_to_catalyst_does_not_leak():
    source = np.zeros(256, dtype=np.float32)
    references = sys.getrefcount(source)

    def exchange():
        t = catalyst.from_dlpack(source)  # numpy's capsule holds a reference until Catalyst's release
        assert sys.getrefcount(source) > references
        del t

    measure("numpy -> catalyst", exchange)
    assert sys.getrefcount(source) == references, "numpy's deleter did not run once per exchange"


def test_numpy_round_trip_does_not_leak():
    source = np.zeros(256, dtype=np.float32)
    references = sys.getrefcount(source)

    def exchange():
        back = np.from_dlpack(catalyst.from_dlpack(source))
        assert back.ctypes.data == source.ctypes.data

    measure("numpy -> catalyst -> numpy", exchange)
    assert sys.getrefcount(source) == references
