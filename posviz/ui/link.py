"""Links: what a link sets, and what the reader is told about the parts of it that were not used.

A *link arrives* whenever the query string holds values that the app did not leave there itself: on a session's
first run, when a page is opened from the menu or a link, when the browser goes back or forward. Every run starts
with ``remember`` (the query string as this run got it), ``opened`` once the page is known, and ends with
``report``, which names in one notice (in the page's language) every value of the arriving link that no control
took and every key that is no setting of the page.

posviz's own controls (``widgets``) keep their value in the URL by hand: ``incoming`` tells a control whether a link
has just set its key (and to what), ``leave`` writes back the value it uses, ``refuse`` records a link value it
could not take. Streamlit's URL-bound widgets drop a value they cannot take; ``report`` finds those by comparing
the link with what the controls show.

Which keys are settings of a page is read once from the source: every ``key=`` of a widget call, the key of every
``widgets.Controls`` control, and every key the code reads from ``st.query_params``, in the page's script, in the
modules of its views it imports from ``posviz/ui``'s packages, and in the frame around it (``app.py``,
``posviz/ui``).
"""

from __future__ import annotations

import ast
import functools
import re
import unicodedata
from pathlib import Path

import streamlit as st

from .i18n import t

ROOT = Path(__file__).resolve().parents[2]
#: The query string as this run got it: key -> values.
ARRIVED = "posviz.link"
#: The query string as the previous run left it.
LEFT = "posviz.link.left"
#: The page of this run (its name) and of the previous one, and the script that draws it.
PAGE = "posviz.link.page"
PAGE_CHANGED = "posviz.link.page_changed"
SCRIPT = "posviz.link.script"
#: What each posviz control left in the URL and the value it used: scope -> key -> (URL values, value). The scope
#: is the page, or ``FRAME`` for the controls drawn before the page is known (the sidebar's).
MEMORY = "posviz.link.memory"
SCOPE = "posviz.link.scope"
FRAME = ""
#: Link values a posviz control of this run could not take: key -> values.
REFUSED = "posviz.link.refused"
#: Keys whose refused link value a control has explained itself (``explained``), this run.
EXPLAINED = "posviz.link.explained"
#: The path of this run's address when it names no page (``nosuchpage``): Home is drawn, and ``report`` says so.
NO_PAGE = "posviz.link.no_page"
#: The methods of ``widgets.Controls``, whose first argument is the control's key.
CONTROL_METHODS = frozenset({"numeric", "radio", "toggle"})
#: Where the frame's controls live: their keys are settings of every page.
FRAME_SOURCES = ("app.py", "posviz/ui")


def remember() -> None:
    """Keep the query string as this run got it (before any control reads or rewrites it)."""
    st.session_state[ARRIVED] = {key: st.query_params.get_all(key) for key in st.query_params}
    st.session_state[REFUSED] = {}
    st.session_state[EXPLAINED] = set()
    st.session_state[SCOPE] = FRAME
    st.session_state[NO_PAGE] = None


def no_page(path: str) -> None:
    """Record that the address names ``path``, which is no page of the app (the page drawn is Home)."""
    st.session_state[NO_PAGE] = path


def opened(page: str, script: str) -> None:
    """Say which page this run draws (``page`` its name, ``script`` its file). A page other than the previous run's
    has been opened: every value of its query string arrives, and its controls read them."""
    changed = st.session_state.get(PAGE) != page
    st.session_state[PAGE_CHANGED] = changed
    st.session_state[PAGE] = page
    st.session_state[SCRIPT] = script
    st.session_state[SCOPE] = page
    memory = st.session_state.setdefault(MEMORY, {})
    if changed:
        for scope in [s for s in memory if s != FRAME]:
            del memory[scope]


def _memory() -> dict:
    return st.session_state.setdefault(MEMORY, {}).setdefault(st.session_state.get(SCOPE, FRAME), {})


def incoming(key: str) -> list[str] | None:
    """The values a link has just given ``key`` (an empty list: the link has none, so the default applies), or None
    when the URL still holds what this control left there (its value is the one the reader set)."""
    given = st.query_params.get_all(key)
    left = _memory().get(key)
    if left is not None and tuple(given) == left[0]:
        return None
    if left is not None and not given and st.session_state.get(SCOPE, FRAME) == FRAME:
        # the frame's controls (the language) hold for the session: a link between pages that does not name them
        # (``st.page_link`` replaces the query string) leaves them as the reader set them
        return None
    return given


def previous(key: str, default=None):
    """The value the control ``key`` used on the previous run of this page (``default`` if it had none)."""
    left = _memory().get(key)
    return default if left is None else left[1]


def leave(key: str, text: str | None, value) -> None:
    """Put ``text`` in the URL under ``key`` (None: leave it out, the value is the default) and remember it, with the
    ``value`` the control uses."""
    wanted = [] if text is None else [text]
    if st.query_params.get_all(key) != wanted:
        if text is None:
            st.query_params.pop(key, None)
        else:
            st.query_params[key] = text
    _memory()[key] = (tuple(wanted), value)


def in_use() -> dict[str, object]:
    """Every posviz control's value in use, by its key, as the control returned it on its latest run (the frame's
    controls' and the open page's): what the handout and the values line say, whatever the widgets hold."""
    memory = st.session_state.get(MEMORY, {})
    page = st.session_state.get(PAGE)
    return {key: value for scope in (FRAME, page) for key, (_, value) in memory.get(scope, {}).items()}


def explained(key: str) -> None:
    """Record that the control of ``key`` has told, in a sentence of its own, why the link's value was not used
    (the slides' "not a slide number"): the run's notice does not name it a second time."""
    st.session_state.setdefault(EXPLAINED, set()).add(key)


def refuse(key: str, given: list[str]) -> None:
    """Record that the link's ``given`` values of ``key`` could not be used (the control shows its default)."""
    st.session_state.setdefault(REFUSED, {})[key] = list(given)


# ------------------------------------------------------------------------------------------------- known keys


def _loop_values(target: ast.expr, source: ast.expr, found: dict[str, list[ast.expr]]) -> None:
    """The values a ``for`` loop gives its names: ``for side in ("a", "b")`` and
    ``for column, side in zip(columns, ("a", "b"))``."""
    if isinstance(target, ast.Name) and isinstance(source, (ast.Tuple, ast.List)):
        found.setdefault(target.id, []).extend(source.elts)
    elif (
        isinstance(target, ast.Tuple)
        and isinstance(source, ast.Call)
        and isinstance(source.func, ast.Name)
        and source.func.id == "zip"
    ):
        for name, values in zip(target.elts, source.args, strict=False):
            _loop_values(name, values, found)


def _names(tree: ast.AST) -> dict[str, list[ast.expr]]:
    """Every value given to each plain name in ``tree``: assigned (``KEY = "present"``, ``wkey = f"{side}_..."``),
    as a parameter's default or a call's argument to a function of the file, or by a ``for`` loop."""
    found: dict[str, list[ast.expr]] = {}
    functions = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    for node in ast.walk(tree):
        if isinstance(node, ast.For):
            _loop_values(node.target, node.iter, found)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
            params = functions[node.func.id].args
            for param, value in zip(params.posonlyargs + params.args, node.args, strict=False):
                found.setdefault(param.arg, []).append(value)
            for keyword in node.keywords:
                if keyword.arg is not None:
                    found.setdefault(keyword.arg, []).append(keyword.value)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found.setdefault(node.target.id, []).append(node.value)
        elif isinstance(node, (ast.FunctionDef, ast.Lambda)):
            args = node.args
            positional = args.posonlyargs + args.args
            for arg, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True):
                found.setdefault(arg.arg, []).append(default)
            for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
                if kw_default is not None:
                    found.setdefault(arg.arg, []).append(kw_default)
    return found


def _is_query_params(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "query_params"


@functools.cache
def _keys_in(path: Path) -> tuple[frozenset[str], tuple[str, ...]]:
    """The keys a source file gives widgets or reads from the URL: exact keys, and regular expressions for keys
    built with f-strings (``f"side_{side}"`` -> ``side_.*``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = _names(tree)
    exact: set[str] = set()
    patterns: set[str] = set()
    seen: set[tuple[int, int]] = set()  # a name bound in many places is followed once per depth, not once per path

    def add(expr: ast.expr | None, depth: int = 0) -> None:
        if expr is None or depth > 4 or (id(expr), depth) in seen:
            return
        seen.add((id(expr), depth))
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            exact.add(expr.value)
        elif isinstance(expr, ast.JoinedStr) and any(isinstance(part, ast.Constant) for part in expr.values):
            # an f-string of names alone (f"{key}{suffix}") says nothing about the keys: the names' own values do
            patterns.add(
                "".join(re.escape(str(part.value)) if isinstance(part, ast.Constant) else ".*" for part in expr.values)
            )
        elif isinstance(expr, ast.Name):
            for value in names.get(expr.id, ()):
                add(value, depth + 1)
        elif isinstance(expr, ast.IfExp):
            add(expr.body, depth + 1)
            add(expr.orelse, depth + 1)

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "key":
                    add(keyword.value)
            func = node.func
            if isinstance(func, ast.Attribute) and _is_query_params(func.value) and node.args:
                add(node.args[0])  # st.query_params.get("cfg"), .get_all, .pop
            elif isinstance(func, ast.Attribute) and func.attr in CONTROL_METHODS and node.args:
                add(node.args[0])  # a page's widgets.Controls: CTL.numeric("factor", ...)
        elif isinstance(node, ast.Subscript) and _is_query_params(node.value):
            add(node.slice)  # st.query_params["cfg"]
        elif isinstance(node, ast.Compare) and any(_is_query_params(c) for c in node.comparators):
            add(node.left)  # "cfg" in st.query_params
    return frozenset(exact), tuple(sorted(patterns))


@functools.cache
def _frame_files() -> tuple[Path, ...]:
    files = []
    for source in FRAME_SOURCES:
        path = ROOT / source
        files += sorted(path.glob("*.py")) if path.is_dir() else [path]
    return tuple(files)


def _view_modules(path: Path) -> set[Path]:
    """The modules of ``posviz/ui``'s packages (a page's views: ``posviz/ui/inspector/tables.py``) that the source
    file ``path`` imports: ``from posviz.ui.inspector import tables``, and inside such a package ``from . import
    usage`` or ``from .source import load``. The modules of ``posviz/ui`` itself are the frame's, read anyway."""
    ui = ROOT / "posviz" / "ui"
    found: set[Path] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = node.module or ""
        if node.level == 0 and module.startswith("posviz.ui."):
            base = ROOT.joinpath(*module.split("."))
        elif node.level > 0 and path.parent.parent.is_relative_to(ui):  # a relative import inside a package of ui
            base = path.parents[node.level - 1].joinpath(*(node.module.split(".") if node.module else ()))
        else:
            continue
        candidates = [base.with_suffix(".py"), base / "__init__.py", *(base / f"{a.name}.py" for a in node.names)]
        found |= {c for c in candidates if c.is_file() and c.parent != ui and c.is_relative_to(ui)}
    return found


def _page_files(script: Path) -> tuple[Path, ...]:
    """The page's script and every module of its views (``_view_modules``), followed through their own imports."""
    files, todo = {script}, [script]
    while todo:
        for module in _view_modules(todo.pop()) - files:
            files.add(module)
            todo.append(module)
    return tuple(sorted(files))


@functools.cache
def known_keys(script: str) -> tuple[frozenset[str], re.Pattern | None]:
    """The URL keys that are settings of the page drawn by ``script`` (its own, its views' and the frame's): exact
    keys, and one pattern for the keys built at run time."""
    exact: set[str] = set()
    patterns: set[str] = set()
    for path in (*_frame_files(), *_page_files(ROOT / script)):
        keys, built = _keys_in(path)
        exact |= keys
        patterns |= set(built)
    return frozenset(exact), re.compile("|".join(f"(?:{p})" for p in sorted(patterns))) if patterns else None


def is_known(key: str, script: str) -> bool:
    exact, built = known_keys(script)
    return key in exact or (built is not None and built.fullmatch(key) is not None)


# ----------------------------------------------------------------------------------------------------- report


def parse(text: str) -> float | None:
    """The number in a link's text, or None: ``1e3``, ``500,000``, ``500_000`` and full-width digits are numbers."""
    cleaned = unicodedata.normalize("NFKC", text).strip().replace(",", "")
    try:
        return float(cleaned)
    except ValueError:
        return None


def _same(given: list[str], value) -> bool:
    shown = [str(v) for v in value] if isinstance(value, (list, tuple)) else [str(value)]
    if len(shown) != len(given):
        return False
    for a, b in zip(given, shown, strict=True):
        x, y = parse(a), parse(b)
        if x is not None and y is not None:
            if x != y:
                return False
        elif a.strip().lower() != b.strip().lower():
            return False
    return True


def arrived() -> dict[str, list[str]]:
    """The values of this run's query string that the app did not leave there itself (all of them on a session's
    first run and when a page is opened)."""
    now = st.session_state.get(ARRIVED, {})
    if st.session_state.get(PAGE_CHANGED, True) or LEFT not in st.session_state:
        return dict(now)
    left = st.session_state[LEFT]
    return {key: given for key, given in now.items() if left.get(key) != given}


def ignored() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """What this run did not use of an arriving link: the values no control took (gone from the URL, and the control
    or the open tab shows something else; or refused by a posviz control), and the keys that are no setting of the
    page. A value for a control that is not drawn on this run (another tab's) waits in the URL and is not named."""
    script = st.session_state.get(SCRIPT, "")
    dropped: dict[str, list[str]] = {}
    unknown: dict[str, list[str]] = {}
    for key, given in arrived().items():
        if not is_known(key, script):
            unknown[key] = given
            continue
        if st.query_params.get_all(key) == given:
            continue  # still in the link: taken, or waiting for a tab that is not open
        value = st.session_state.get(f"{key}.code", st.session_state.get(key))
        if value is None or not _same(given, value):
            dropped[key] = given
    dropped.update(st.session_state.get(REFUSED, {}))
    for key in st.session_state.get(EXPLAINED, set()):
        dropped.pop(key, None)
    return dropped, unknown


def _listed(values: dict[str, list[str]]) -> str:
    return ", ".join(f"{key}={'/'.join(given)}" for key, given in values.items())


def report() -> None:
    """After the page: one notice naming what an arriving link set that was not used; then remember the query string
    as this run leaves it, so that the next run tells what arrives anew."""
    dropped, unknown = ignored()
    lines = []
    if st.session_state.get(NO_PAGE):
        lines.append(t("link.no_page", path=f"/{st.session_state[NO_PAGE]}"))
    if dropped:
        lines.append(t("link.ignored", values=_listed(dropped)))
    if unknown:
        lines.append(t("link.unknown", keys=_listed(unknown)))
    if lines:
        st.toast("\n\n".join(lines), icon=":material/link_off:", duration="long")
    for key in unknown:  # no setting of the page: named once, then gone from the address bar
        del st.query_params[key]
    st.session_state[LEFT] = {key: st.query_params.get_all(key) for key in st.query_params}
