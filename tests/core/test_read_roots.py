"""The app's read roots: which paths a visitor may make the server read (posviz.checkpoint.roots)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from posviz import checkpoint as ckpt
from posviz.checkpoint import roots


@pytest.fixture
def root(tmp_path):
    """A root holding a model file and a folder, beside a folder outside it."""
    inside = tmp_path / "root"
    (inside / "model").mkdir(parents=True)
    (inside / "model" / "config.json").write_text("{}")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.json").write_text("{}")
    return inside


def refused(path, allowed) -> str:
    with pytest.raises(ckpt.PathNotAllowed) as caught:
        ckpt.allowed_path(path, allowed)
    return str(caught.value)


def test_a_file_and_a_folder_inside_a_root_are_read_resolved(root):
    allowed = (root.resolve(),)
    assert ckpt.allowed_path(root / "model", allowed) == (root / "model").resolve()
    assert ckpt.allowed_path(str(root / "model" / "config.json"), allowed) == (root / "model" / "config.json").resolve()


def test_dot_dot_out_of_a_root_is_refused_and_inside_is_not(root):
    allowed = (root.resolve(),)
    assert refused(f"{root}/model/../../outside/secret.json", allowed) == roots.REFUSED
    assert ckpt.allowed_path(f"{root}/model/../model/config.json", allowed) == (root / "model" / "config.json")


def test_an_absolute_path_outside_every_root_is_refused(root):
    assert refused("/etc/passwd", (root.resolve(),)) == roots.REFUSED
    assert refused(root.parent / "outside", (root.resolve(),)) == roots.REFUSED


def test_a_symlink_out_of_a_root_is_refused_and_one_inside_is_allowed(root):
    (root / "escape").symlink_to(root.parent / "outside" / "secret.json")
    (root / "up").symlink_to(root.parent)
    (root / "alias").symlink_to(root / "model")
    allowed = (root.resolve(),)
    assert refused(root / "escape", allowed) == roots.REFUSED
    assert refused(root / "up" / "outside", allowed) == roots.REFUSED
    assert ckpt.allowed_path(root / "alias" / "config.json", allowed) == (root / "model" / "config.json").resolve()


def test_a_device_a_fifo_and_a_socket_are_refused_even_inside_a_root(root):
    os.mkfifo(root / "pipe")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(root / "sock"))
    try:
        allowed = (root.resolve(),)
        assert refused(root / "pipe", allowed) == roots.REFUSED
        assert refused(root / "sock", allowed) == roots.REFUSED
        assert refused("/dev/null", (Path("/dev"),)) == roots.REFUSED
        assert refused("/dev/null", (Path("/"),)) == roots.REFUSED  # even under a root that holds everything
    finally:
        listener.close()


def test_a_missing_path_gets_the_same_sentence_as_a_forbidden_one_and_names_neither(root):
    allowed = (root.resolve(),)
    existing = refused(root.parent / "outside" / "secret.json", allowed)
    missing = refused(root.parent / "outside" / "no-such-file", allowed)
    assert existing == missing == roots.REFUSED
    assert str(root.parent) not in existing and "outside" not in existing and "secret" not in existing


def test_a_missing_path_inside_a_root_reaches_the_loader(root):
    missing = ckpt.allowed_path(root / "no-such-model", (root.resolve(),))
    with pytest.raises(ckpt.CheckpointError, match="does not exist"):
        ckpt.load_position_embeddings(missing)


def test_no_root_refuses_everything_with_its_own_sentence(root):
    with pytest.raises(ckpt.ReadingNotAllowed) as caught:
        ckpt.allowed_path(root / "model", ())
    assert str(caught.value) == roots.NOT_ALLOWED and "README" in roots.NOT_ALLOWED
    assert isinstance(caught.value, ckpt.PathNotAllowed) and isinstance(caught.value, ckpt.CheckpointError)


@pytest.mark.parametrize("address", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"])
def test_a_loopback_server_reads_the_model_cache_and_home_by_default(address, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "hf").mkdir()
    env = {"HF_HOME": str(tmp_path / "hf")}
    assert ckpt.read_roots(address, env) == ((tmp_path / "hf").resolve(), (tmp_path / "home").resolve())


@pytest.mark.parametrize("address", [None, "", "0.0.0.0", "::", "192.168.1.10", "example.org"])
def test_a_server_others_reach_reads_nothing_until_configured(address, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert ckpt.read_roots(address, {}) == ()


def test_the_variable_sets_the_roots_whatever_the_address(root, tmp_path):
    other = tmp_path / "outside"
    env = {roots.ENV: os.pathsep.join([str(root), "", str(other), str(tmp_path / "missing"), str(root)])}
    assert ckpt.read_roots("0.0.0.0", env) == (root.resolve(), other.resolve())
    assert ckpt.read_roots("127.0.0.1", {roots.ENV: ""}) == ()  # set but empty: nothing, even on loopback


def test_the_environment_is_read_when_none_is_given(root, monkeypatch):
    monkeypatch.setenv(roots.ENV, str(root))
    assert ckpt.read_roots(None) == (root.resolve(),)
    monkeypatch.delenv(roots.ENV)
    assert ckpt.read_roots(None) == ()
