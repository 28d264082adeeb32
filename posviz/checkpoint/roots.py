"""Which paths the app may read on the server: files and folders inside the read roots its owner allowed.

The checkpoint inspector and the Models page open a typed path or a model of the Hugging Face cache on the machine
that runs the app. A server that others reach must not let them probe which files exist there or open any folder, so
the app reads a path only through :func:`allowed_path`:

- the roots are ``POSVIZ_READ_ROOTS`` (folders separated by ``os.pathsep``, ``:`` on Linux; set but empty: none);
  without it, a server that listens on a loopback address only (``server.address`` 127.0.0.1, localhost or ::1)
  reads the user's Hugging Face cache (``HF_HUB_CACHE``, ``HF_HOME``, else ``~/.cache/huggingface``) and home
  folder, and any other server (Streamlit's default listens on every address) reads nothing until its owner sets
  the variable;
- every symlink is resolved before the check, so a link inside a root that points outside is outside;
- only regular files and folders are read: device files, fifos and sockets are refused;
- the refusal is one sentence that names no path and is the same whether the path exists or not.

The library's own functions (``load_position_embeddings``, ``model_positions``) take any path: the roots are the
app's rule for what a visitor may ask the server to read.
"""

from __future__ import annotations

import ipaddress
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from .errors import CheckpointError

#: The environment variable that sets the read roots.
ENV = "POSVIZ_READ_ROOTS"

#: The sentence of every refused path: the same for a path that exists and one that does not, naming neither.
REFUSED = (
    "posviz does not open this path: it opens only files and folders inside the folders the server's owner allowed "
    f"it to read ({ENV})."
)
#: The sentence when no root is set.
NOT_ALLOWED = (
    f"The server's owner has not allowed reading files on the server; the README says how to allow it ({ENV})."
)


class PathNotAllowed(CheckpointError):
    """A path the app will not read: outside every read root once its symlinks are resolved, or not a regular file
    or folder (a device, a fifo, a socket). The message is :data:`REFUSED` whatever the path, so it tells nothing
    about what exists on the server."""


class ReadingNotAllowed(PathNotAllowed):
    """No read root is set, so the app reads no typed path and no model cache (:data:`NOT_ALLOWED`)."""


def is_loopback(address: str | None) -> bool:
    """Whether a server listening on ``address`` (Streamlit's ``server.address``) is reachable from this machine
    only. Unset or empty is not: Streamlit then listens on every address."""
    if not address:
        return False
    host = address.strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def default_roots(address: str | None, environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The roots without ``POSVIZ_READ_ROOTS``: on a loopback-only server the Hugging Face cache and the user's home;
    on any other, none."""
    env = os.environ if environ is None else environ
    if not is_loopback(address):
        return ()
    cache = [env[name] for name in ("HF_HUB_CACHE", "HF_HOME") if env.get(name)]
    return (*map(Path, cache), Path.home() / ".cache" / "huggingface", Path.home())


def read_roots(address: str | None = None, environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The folders the app may read under, resolved (symlinks followed), each an existing folder: the entries of
    ``POSVIZ_READ_ROOTS`` when it is set, else :func:`default_roots` for a server listening on ``address``."""
    env = os.environ if environ is None else environ
    given = [p for p in env[ENV].split(os.pathsep) if p.strip()] if ENV in env else default_roots(address, env)
    roots: list[Path] = []
    for entry in given:
        root = Path(os.path.realpath(Path(entry).expanduser()))
        if root.is_dir() and root not in roots:
            roots.append(root)
    return tuple(roots)


def allowed_path(path: str | os.PathLike, roots: tuple[Path, ...]) -> Path:
    """``path`` with its symlinks resolved, when it lies inside one of ``roots`` (:func:`read_roots`) and is a
    regular file or a folder; a path inside a root that does not exist is returned too (the loader then says it does
    not exist). Raises :class:`ReadingNotAllowed` when there is no root and :class:`PathNotAllowed` otherwise."""
    if not roots:
        raise ReadingNotAllowed(NOT_ALLOWED)
    try:
        text = os.fspath(path)
        if not isinstance(text, str) or not text.strip() or "\0" in text:
            raise ValueError
        resolved = Path(os.path.realpath(Path(text).expanduser()))
    except (OSError, ValueError, TypeError, RuntimeError):
        raise PathNotAllowed(REFUSED) from None
    if not any(resolved.is_relative_to(root) for root in roots):
        raise PathNotAllowed(REFUSED)
    try:
        mode = resolved.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return resolved
    except (OSError, ValueError):
        raise PathNotAllowed(REFUSED) from None
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise PathNotAllowed(REFUSED)
    return resolved
