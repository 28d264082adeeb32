"""Every package the app imports is declared in requirements.txt, by the name pip installs it under: a fresh machine
that runs the README's first command must have everything the app imports (a package that only arrives as another
package's dependency, or only with the test tools, is one release away from a crash)."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "posviz").rglob("*.py"))]


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


def declared(requirements: Path) -> set[str]:
    """The distributions a requirements file names (normalised as pip does), following ``-r`` includes."""
    names: set[str] = set()
    for line in requirements.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r"):
            names |= declared(requirements.parent / line[2:].strip())
        elif line:
            names.add(re.split(r"[<>=!~\[ ;]", line)[0].lower().replace("_", "-"))
    return names


def test_every_third_party_import_of_the_app_is_declared():
    distributions = importlib.metadata.packages_distributions()
    wanted = declared(ROOT / "requirements.txt")
    missing = {}
    for module, where in imported_modules().items():
        if module in sys.stdlib_module_names or module == "posviz" or module == "__future__":
            continue
        names = {d.lower().replace("_", "-") for d in distributions.get(module, [module])}
        if not names & wanted:
            missing[module] = (sorted(names), where)
    assert missing == {}, f"imported by the app but not in requirements.txt: {missing}"


def test_the_check_sees_an_undeclared_import(tmp_path):
    """The check above can fail: a requirements file without markdown-it-py does not cover the handout's import."""
    partial = tmp_path / "requirements.txt"
    partial.write_text("streamlit\nnumpy\n", encoding="utf-8")
    assert "markdown-it-py" not in declared(partial)
    assert "markdown-it-py" in declared(ROOT / "requirements.txt")
    assert imported_modules()["markdown_it"].startswith("posviz/")
