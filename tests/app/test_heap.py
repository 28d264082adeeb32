"""The heap between runs: what a run's new modules brought is frozen out of the collector's walks, once."""

from __future__ import annotations

import gc
import importlib

from posviz.ui import heap

from ._support import assert_clean, open_page


def test_a_run_that_imports_a_module_freezes_what_is_alive(tmp_path, monkeypatch):
    try:
        heap.settle()  # whatever this process imported so far
        frozen = gc.get_freeze_count()
        assert not heap.settle() and gc.get_freeze_count() == frozen  # nothing new: nothing changes
        (tmp_path / "posviz_heap_probe.py").write_text("TABLE = {'rows': [[1, 2], [3, 4]]}\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        probe = importlib.import_module("posviz_heap_probe")
        assert any(o is probe.TABLE for o in gc.get_objects())  # tracked: a full collection walks it
        assert heap.settle()
        assert gc.get_freeze_count() > frozen
        assert not any(o is probe.TABLE for o in gc.get_objects())  # frozen: no collection walks it again
    finally:
        gc.unfreeze()  # give this test process its collector back


def test_a_run_of_the_app_freezes_what_its_imports_brought(monkeypatch):
    """The app settles the heap after a run: a run that finds modules it has not frozen yet (here: as if none were)
    leaves the modules' objects out of every later collection's walk."""
    gc.unfreeze()
    monkeypatch.setattr(heap, "_modules", 0)
    try:
        assert gc.get_freeze_count() == 0
        assert_clean(open_page("alibi"))
        assert gc.get_freeze_count() > 0
        assert not any(o is heap.__dict__ for o in gc.get_objects())  # a module's namespace, frozen
    finally:
        gc.unfreeze()
