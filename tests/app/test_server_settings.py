"""The server settings a class needs are what `streamlit run app.py` reads from the project's config: no garbage
collection after every script run, no file watcher, no magic. A developer's live reload is two flags away."""

from __future__ import annotations

import json
import subprocess
import sys

from ._support import ROOT

OPTIONS = ("runner.postScriptGC", "server.fileWatcherType", "server.runOnSave", "runner.magicEnabled")
READ = (
    "import json, sys\n"
    "from streamlit import config\n"
    "config.get_config_options(force_reparse=True, options_from_flags=json.loads(sys.argv[1]))\n"
    f"print(json.dumps({{name: config.get_option(name) for name in {OPTIONS!r}}}))\n"
)


def read_options(flags: dict) -> dict:
    """The options a server started in the project folder with ``flags`` runs with (read in a fresh interpreter,
    as ``streamlit run`` reads them)."""
    out = subprocess.run(
        [sys.executable, "-c", READ, json.dumps(flags)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_class_gets_the_settings_of_the_project_config():
    assert read_options({}) == {
        "runner.postScriptGC": False,
        "server.fileWatcherType": "none",
        "server.runOnSave": False,
        "runner.magicEnabled": False,
    }


def test_the_live_reload_flags_of_the_readme_turn_reloading_back_on():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "--server.fileWatcherType auto --server.runOnSave true" in readme
    got = read_options({"server.fileWatcherType": "auto", "server.runOnSave": True})
    assert got["server.fileWatcherType"] == "auto" and got["server.runOnSave"] is True
