"""Python threads share the binding: long ops run without the GIL (so threads overlap), and
ops that record for autograd and backward() take turns on one lock, as catalyst.h asks of
threads that share a graph. Every thread's result must be exact."""
import threading

import numpy as np

import catalyst

THREADS, ROUNDS = 4, 50


def run_threads(body):
    errors = []

    def guarded(index):
        try:
            body(index)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_long_ops_from_many_threads_give_exact_results():
    x_np = np.full((256, 256), 0.5, dtype=np.float32)  # 64Ki elements: run without the GIL
    x = catalyst.tensor(x_np)

    def body(index):
        for _ in range(ROUNDS):
            y = (x * float(index + 1)).sum()
            assert y.item() == 0.5 * (index + 1) * 256 * 256

    run_threads(body)


def test_threads_sharing_one_graph_take_turns():
    w = catalyst.tensor(np.ones((256, 256), dtype=np.float32), requires_grad=True)

    def body(index):
        for _ in range(ROUNDS):
            loss = catalyst.sum(w * 2.0)  # records into w's graph, with the GIL released
            loss.backward()

    run_threads(body)
    # Every backward added 2 to each element of w's gradient.
    np.testing.assert_array_equal(w.grad.numpy(), np.full((256, 256), 2.0 * THREADS * ROUNDS, dtype=np.float32))
