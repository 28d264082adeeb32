"""Suite-wide settings: the repo root on sys.path, hypothesis profiles, no silent skips in CI, and the fast tier.

``python -m pytest -m "not slow" -n 2`` is the tier a developer runs while working (under a minute on 2 cores):
every module of posviz is exercised by it. The full suite (CI) adds what ``SLOW`` names — the browser tests, most
app tests, training runs — and every test marked ``slow`` where it is written."""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# as app.py does: OpenMP threads (t-SNE, torch) sleep while they wait instead of spinning on a busy machine
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# the training lab keeps its finished runs in a folder of this test session, never in the user's cache
os.environ["POSVIZ_LAB_DIR"] = tempfile.mkdtemp(prefix="posviz-lab-tests-")
atexit.register(shutil.rmtree, os.environ["POSVIZ_LAB_DIR"], True)

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "default")

_skipped: list[str] = []


@pytest.fixture(scope="session", autouse=True)
def _read_roots(tmp_path_factory):
    """The app reads typed paths and the model cache only inside its read roots (``POSVIZ_READ_ROOTS``): the tests'
    model files live under this session's temporary folder (every ``tmp_path``), so that is the one root. A test of the
    roots themselves sets the variable again with ``monkeypatch``."""
    previous = os.environ.get("POSVIZ_READ_ROOTS")
    os.environ["POSVIZ_READ_ROOTS"] = str(tmp_path_factory.getbasetemp())
    yield
    if previous is None:
        os.environ.pop("POSVIZ_READ_ROOTS", None)
    else:
        os.environ["POSVIZ_READ_ROOTS"] = previous


def pytest_runtest_logreport(report):
    if report.skipped:
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    """In CI a skipped test is a failure: every test must really run there."""
    if os.environ.get("CI") and _skipped and session.exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter):
    if os.environ.get("CI") and _skipped:
        terminalreporter.write_line(f"CI forbids skipped tests; skipped: {', '.join(_skipped)}", red=True)


#: Tests of the full suite only, by file (relative to tests/): each takes seconds to minutes, and the fast tier
#: covers the same modules with smaller cases.
SLOW = (
    "e2e/",  # a real browser and servers
    "app/",  # pages through AppTest, but for FAST_APP below
    "core/test_lab_training.py",  # training runs
    "core/test_lab_queue.py",
)
#: The app tests of the fast tier: every page's default view (and so every module of posviz/ui), the internals of
#: Streamlit the app reads, the number boxes' rules, and the catalogs.
FAST_APP = (
    "app/test_pages.py",
    "app/test_internals.py",
    "app/test_numbers.py",
    "app/test_i18n.py",
    "app/test_glossary.py",
    "app/test_server_settings.py",
)


def pytest_collection_modifyitems(config, items):
    tests = ROOT / "tests"
    for item in items:
        where = Path(str(item.fspath)).resolve().relative_to(tests).as_posix()
        if where.startswith(SLOW) and not where.startswith(FAST_APP):
            item.add_marker(pytest.mark.slow)
