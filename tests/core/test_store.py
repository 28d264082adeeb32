"""The one store bounded by bytes (``posviz.base.store``), which the pages' cache and the training lab share."""

from __future__ import annotations

import threading

import numpy as np

from posviz.base.store import ByteStore, nbytes


def test_it_keeps_at_most_its_budget_and_forgets_the_least_recently_used():
    one = nbytes(np.zeros(100))
    store = ByteStore(3 * one)
    for i in range(3):
        store.put(i, np.full(100, float(i)))
    assert store.get(0)[0] == 0.0  # 0 is now the most recently used, 1 the least
    store.put(3, np.zeros(100))
    assert store.keys() == [2, 0, 3] and store.nbytes == 3 * one <= store.budget
    assert store.get(1, "gone") == "gone" and 1 not in store


def test_a_value_larger_than_the_budget_is_handed_back_not_kept():
    store = ByteStore(1_000)
    big = np.zeros(1_000)
    assert store.put("big", big) is big and "big" not in store and store.nbytes == 0


def test_the_first_value_stored_under_a_key_wins():
    store = ByteStore(10_000, size=lambda value: 1)
    first, second = object(), object()
    assert store.put("k", first) is first
    assert store.put("k", second) is first and len(store) == 1


def test_a_value_is_computed_once_and_only_on_a_miss():
    store = ByteStore(10_000, size=lambda value: 8)
    calls = []

    def compute():
        calls.append(1)
        return len(calls)

    assert [store.get_or_compute("k", compute) for _ in range(3)] == [1, 1, 1] and calls == [1]


def test_its_own_size_function_counts_the_budget():
    store = ByteStore(10, size=len)
    store.put("a", "x" * 6)
    store.put("b", "y" * 6)  # 12 > 10: "a" goes
    assert store.keys() == ["b"] and store.nbytes == 6


def test_threads_storing_at_once_keep_the_total_right():
    store = ByteStore(50, size=lambda value: 1)

    def fill(start):
        for i in range(start, start + 200):
            store.put(i, i)
            store.get(i - 3)

    threads = [threading.Thread(target=fill, args=(k * 1000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store) == store.nbytes == 50
