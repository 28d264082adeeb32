"""Every package the app imports is declared in pyproject.toml's dependencies, by the name pip installs it under, and
requirements.txt installs the project: a fresh machine that runs the README's first command must have everything the
app imports (a package that only arrives as another package's dependency, or only with the test tools, is one release
away from a crash)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "app.py", *sorted((ROOT / "page_scripts").glob("*.py")), *sorted((ROOT / "posviz").rglob("*.py"))]


def imported_modules() -> dict[str, str]:
    """Top-level module -> the first file that imports it, over the app's sources (functions' imports too)."""
    found: dict[str, str] = {}
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], str(path.relative_to(ROOT)))
    return found


def names(requirements: list[str]) -> set[str]:
    """The distributions named by requirement strings, normalised as pip does."""
    return {re.split(r"[<>=!~\[ ;]", r.strip())[0].lower().replace("_", "-") for r in requirements if r.strip()}


def declared(pyproject: Path) -> set[str]:
    """The runtime dependencies a pyproject.toml declares."""
    return names(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["dependencies"])


def test_every_third_party_import_of_the_app_is_declared():
    distributions = importlib.metadata.packages_distributions()
    wanted = declared(ROOT / "pyproject.toml")
    missing = {}
    for module, where in imported_modules().items():
        if module in sys.stdlib_module_names or module == "posviz" or module == "__future__":
            continue
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not names & wanted:
            missing[module] = (sorted(names), where)
    assert missing == {}, f"imported by the app but not in requirements.txt: {missing}"


def test_the_check_sees_an_undeclared_import(tmp_path):
    """The check above can fail: dependencies without markdown-it-py do not cover the handout's import."""
    partial = tmp_path / "pyproject.toml"
    partial.write_text('[project]\ndependencies = ["streamlit>=1.67", "numpy"]\n', encoding="utf-8")
    assert "markdown-it-py" not in declared(partial) and "streamlit" in declared(partial)
    assert "markdown-it-py" in declared(ROOT / "pyproject.toml")
    assert imported_modules()["markdown_it"].startswith("posviz/")


def test_the_set_up_commands_install_the_project_and_its_extras():
    """The README's two commands install through requirements*.txt: the project itself (its dependencies), and the
    project with its test extra."""
    lines = {
        p: [x.split("#")[0].strip() for x in (ROOT / p).read_text().splitlines()]
        for p in ("requirements.txt", "requirements-test.txt")
    }
    assert "-e ." in lines["requirements.txt"]
    assert "-e .[test]" in lines["requirements-test.txt"]
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {"pytest", "hypothesis", "transformers", "playwright", "ruff", "mypy"} <= names(extras["test"])
