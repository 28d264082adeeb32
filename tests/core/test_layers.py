"""The packages of posviz import each other in one order, from the bottom up: a package imports only the layers
below it, so a cycle cannot start and a newcomer knows where a helper belongs (CONTRIBUTING.md's table).

Every ``import`` and ``from ... import`` of every module (relative ones resolved, those inside functions too) is
read with ``ast``; an import of a module of the same package is free."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "posviz"

#: The layers, bottom first. ``__init__`` is posviz's facade (``posviz.model_positions`` ...), ``__main__`` its
#: command line.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("base", "_parallel", "number_formats", "pages"),
    ("encodings",),
    ("analysis",),
    ("models",),
    ("checkpoint",),
    ("figures",),
    ("lessons", "lab"),
    ("__init__",),
    ("ui",),
    ("__main__",),
)
RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def _module(path: Path) -> tuple[str, bool]:
    """(dotted name, whether it is a package's __init__)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _part(module: str) -> str:
    """The layer a dotted name belongs to: the first name under posviz (``__init__`` for posviz itself)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(path: Path) -> set[str]:
    """The posviz modules ``path`` imports, as dotted names."""
    return imported(path.read_text(encoding="utf-8"), *_module(path))


def imported(source: str, name: str, is_package: bool = False) -> set[str]:
    """The posviz modules the code ``source`` of module ``name`` imports, as dotted names."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name == "posviz" or a.name.startswith("posviz.")}
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            if target == "posviz" or target.startswith("posviz."):
                # ``from . import x`` names submodules: each counts
                out |= {f"{target}.{a.name}" for a in node.names} if not node.module else {target}
    return out


def edges() -> set[tuple[str, str, str]]:
    """(importing layer, imported layer, importing file) for every import across layers."""
    out = set()
    for path in PACKAGE.rglob("*.py"):
        src = _part(_module(path)[0])
        for target in imports(path):
            dst = _part(target)
            if dst != src:
                out.add((src, dst, str(path.relative_to(PACKAGE.parent))))
    return out


def test_every_package_has_a_layer():
    found = {_part(_module(p)[0]) for p in PACKAGE.rglob("*.py")}
    assert found - set(RANK) == set(), "add the new package to LAYERS"


def test_packages_import_only_the_layers_below_them():
    upward = sorted(f"{file}: {src} imports {dst}" for src, dst, file in edges() if RANK[dst] >= RANK[src])
    assert upward == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ..analysis import evenly_spaced\n", {"posviz.analysis"}),
        ("from .. import analysis, figures\n", {"posviz.analysis", "posviz.figures"}),
        ("import posviz.models.positions\n", {"posviz.models.positions"}),
        ("def f():\n    from ..models import model_positions\n", {"posviz.models"}),
    ],
)
def test_the_reader_of_imports_sees_each_form(source, expected):
    """The check above can fail: each form of import is seen (here in a module of posviz/encodings)."""
    assert imported(source, "posviz.encodings.probe") == expected
    assert imported("from . import rope\n", "posviz.encodings", is_package=True) == {"posviz.encodings.rope"}
