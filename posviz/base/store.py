"""One store for large results, bounded by the bytes they hold: the pages' cache of tables and figures
(``posviz.ui.cache.TABLES``) and the training lab's loaded runs (``posviz.lab.queue``) both keep theirs here.
Streamlit's ``st.cache_resource`` bounds a cache by a count of entries; a table of 32,768 x 4,096 float64 is 1 GiB
and one of 64 x 16 a few kilobytes, so only a bound in bytes keeps a server's memory where its operator set it."""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from typing import Any

import numpy as np

_MISSING = object()


def nbytes(value, _seen: set[tuple[str, int]] | None = None) -> int:
    """Bytes ``value`` holds: the data of its arrays (numpy, and torch tensors and a torch module's parameters and
    buffers) and of its strings, inside tuples, lists, dicts and dataclass fields at any depth, each object counted
    once (two views of one array count their owner once); an object's own ``nbytes`` (a held figure's);
    ``sys.getsizeof`` of anything else."""
    if isinstance(value, (str, bytes, int, float, type(None))):  # leaves, counted wherever they appear (fast)
        return sys.getsizeof(value)
    seen = set() if _seen is None else _seen

    def first_time(kind: str, ident: int) -> bool:
        if (kind, ident) in seen:
            return False
        seen.add((kind, ident))
        return True

    if isinstance(value, np.ndarray):
        owner = value
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        return owner.nbytes if first_time("object", id(owner)) else 0
    torch = sys.modules.get("torch")  # counted when torch is in use; never imported for it
    if torch is not None and isinstance(value, torch.Tensor):
        storage = value.untyped_storage()
        return storage.nbytes() if first_time("storage", storage.data_ptr()) else 0
    if not first_time("object", id(value)):
        return 0
    if torch is not None and isinstance(value, torch.nn.Module):
        return sum(nbytes(tensor, seen) for tensor in (*value.parameters(), *value.buffers()))
    if isinstance(value, (tuple, list, set, frozenset)):
        return sys.getsizeof(value) + sum(nbytes(item, seen) for item in value)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(nbytes(k, seen) + nbytes(v, seen) for k, v in value.items())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return sys.getsizeof(value) + sum(nbytes(getattr(value, f.name), seen) for f in fields)
    own = getattr(value, "nbytes", None)
    return own if isinstance(own, int) else sys.getsizeof(value)  # an object that counts itself: a held figure


class ByteStore:
    """A least-recently-used map from keys to values, holding at most ``budget`` bytes (``size`` of each value,
    :func:`nbytes` by default). A value larger than the whole budget is handed back but not kept. Thread-safe; a
    value is computed or sized outside the lock, so two threads storing the same new key may both compute it, and
    the first stored wins."""

    def __init__(self, budget: int, size: Callable[[Any], int] = nbytes) -> None:
        self.budget = budget
        self._size = size
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, default=None):
        """The value kept under ``key`` (now the most recently used), else ``default``."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return default
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: Hashable, value):
        """Keep ``value`` under ``key`` if it fits the budget, dropping the least recently used values until the
        store fits again; the value kept under ``key`` is returned (an earlier one, when another thread stored it
        first)."""
        size = self._size(value)
        with self._lock:
            if key in self._entries:
                return self._entries[key][0]
            if size <= self.budget:
                self._entries[key] = (value, size)
                self._total += size
                while self._total > self.budget:
                    _, (_, dropped) = self._entries.popitem(last=False)
                    self._total -= dropped
        return value

    def get_or_compute(self, key: Hashable, compute: Callable[[], Any]):
        """The value kept under ``key``, else ``compute()`` kept there (if it fits) and returned."""
        found = self.get(key, _MISSING)
        return self.put(key, compute()) if found is _MISSING else found

    def items(self) -> Iterator[tuple[Hashable, Any]]:
        """(key, value) of every kept value, least recently used first, as they stand now."""
        with self._lock:
            entries = [(key, value) for key, (value, _) in self._entries.items()]
        return iter(entries)

    def keys(self) -> list:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._total = 0

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """The bytes the kept values hold, as ``size`` counted them."""
        return self._total
