"""A typed path and the model cache on the inspector and the Models page are read only inside the server's read roots,
and a refusal tells a visitor nothing about what exists on the server."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from streamlit import config as st_config

from ._support import assert_clean, open_page, tr

ENV = "POSVIZ_READ_ROOTS"
PAGES = {"inspect": "inspect", "models": "models"}


@pytest.fixture
def server(tmp_path, monkeypatch):
    """A root with a table and a config, beside a folder outside it that holds the same."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    for folder in (root, outside):
        folder.mkdir()
        np.save(folder / "pe.npy", np.arange(32.0).reshape(8, 4))
        (folder / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_positions": 8, "n_embd": 4}))
    monkeypatch.setenv(ENV, str(root))
    return root, outside


def shown(at) -> str:
    """Every sentence the page shows."""
    kinds = ("error", "info", "warning", "success", "markdown", "caption")
    return "\n".join(str(e.value) for kind in kinds for e in getattr(at, kind))


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", PAGES)
def test_a_path_outside_the_roots_is_refused_in_one_sentence_whether_it_exists_or_not(server, page, lang):
    root, outside = server
    (root / "escape").symlink_to(outside)
    answers = []
    for path in (outside, outside / "no-such-model", f"{root}/../outside", root / "escape", "/etc/passwd", "/dev/null"):
        at = open_page(page, query={"from": "path", "path": str(path)}, lang=lang)
        assert not at.exception
        assert [e.value for e in at.error] == [tr(lang, "source.refused")]
        assert "path" not in at.query_params  # a refused path is not kept in the link
        assert str(outside) not in shown(at) and "passwd" not in shown(at)
        answers.append(shown(at))
    assert len(set(answers)) == 1  # nothing tells an existing path from a missing one


@pytest.mark.parametrize("page", PAGES)
def test_a_fifo_inside_a_root_is_refused(server, page):
    root, _ = server
    os.mkfifo(root / "pipe")
    at = open_page(page, query={"from": "path", "path": str(root / "pipe")})
    assert [e.value for e in at.error] == [tr("en", "source.refused")]


def test_a_path_inside_a_root_opens_and_stays_in_the_link(server):
    root, _ = server
    at = open_page("inspect", query={"from": "path", "path": str(root / "pe.npy")})
    assert_clean(at)
    assert not at.error
    assert at.query_params["path"] == str(root / "pe.npy")
    assert tr("en", "inspect.summary", tensor="array", rows=8, dims=4, dtype="float64", format="npy",
              known=tr("en", "inspect.unknown")) in shown(at)  # fmt: skip
    at = open_page("models", query={"from": "path", "path": str(root)})
    assert_clean(at)
    assert not at.error and at.query_params["path"] == str(root)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", PAGES)
def test_without_roots_there_is_no_box_and_no_cache_only_the_sentence(server, page, lang, monkeypatch):
    root, _ = server
    monkeypatch.delenv(ENV)  # the default of a server others reach (config.toml sets no server.address)
    at = open_page(page, query={"from": "path", "path": str(root / "pe.npy")}, lang=lang)
    assert_clean(at)
    assert tr(lang, "source.not_allowed") in [i.value for i in at.info]
    assert not at.text_input and "path" not in at.query_params and str(root) not in shown(at)
    monkeypatch.setenv("HF_HUB_CACHE", str(root))
    at = open_page(page, query={"from": "cache"}, lang=lang)
    assert tr(lang, "source.not_allowed") in [i.value for i in at.info]
    assert str(root) not in shown(at)


def test_a_cache_outside_the_roots_is_not_listed(server, monkeypatch):
    _, outside = server
    snapshot = outside / "hub" / "models--tiny--gpt2" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    np.save(snapshot / "pe.npy", np.ones((4, 2)))
    monkeypatch.setenv("HF_HUB_CACHE", str(outside / "hub"))
    at = open_page("inspect", query={"from": "cache"})
    assert [i.value for i in at.info if "Hugging Face" in i.value] == [tr("en", "source.cache_not_allowed")]
    assert not at.selectbox or "tiny/gpt2" not in [o for s in at.selectbox for o in s.options]
    assert str(outside) not in shown(at)


def test_a_loopback_server_reads_the_home_folder_by_default(server, monkeypatch):
    root, _ = server
    monkeypatch.delenv(ENV)
    monkeypatch.setenv("HOME", str(root))
    before = st_config.get_option("server.address")
    st_config.set_option("server.address", "127.0.0.1")
    try:
        at = open_page("inspect", query={"from": "path", "path": str(root / "pe.npy")})
        assert not at.error and at.query_params["path"] == str(root / "pe.npy")
        st_config.set_option("server.address", "0.0.0.0")
        at = open_page("inspect", query={"from": "path", "path": str(root / "pe.npy")})
        assert tr("en", "source.not_allowed") in [i.value for i in at.info]
    finally:
        st_config.set_option("server.address", before)
