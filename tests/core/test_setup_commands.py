"""The README's two set-up commands, read from the README, and the virtual environment both of them make.

A stock Debian or Ubuntu Python refuses ``pip install`` outside a virtual environment and may have no ``python``:
both commands go through ``deploy/venv.sh``, which makes ``.venv`` with ``python3``, installs Debian's python3-venv
when the venv module is missing, and runs pip only when the requirements changed. These tests run that script in a
copy of the checkout's layout with a requirements file that asks for nothing, so they install nothing.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def setup_commands() -> list[str]:
    """The bash blocks of the README's "Set up on a fresh machine" section, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Set up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S)]


def test_the_readme_keeps_two_commands_each_through_the_virtual_environment():
    start, suite = setup_commands()
    assert (start, suite) == ("bash deploy/start.sh", "bash tests/run.sh")
    assert "bash tests/run.sh" in (ROOT / ".ci/run").read_text()
    for script, requirements in (("deploy/start.sh", "requirements.txt"), ("tests/run.sh", "requirements-test.txt")):
        code = [line.split("#")[0] for line in (ROOT / script).read_text().splitlines()]
        assert f"source deploy/venv.sh {requirements}" in [line.strip() for line in code]
        # Nothing runs outside the environment: no bare python, python3 or pip.
        assert not [line for line in code if re.search(r"(^|[\s;&|(])(python3?|pip3?)\s", line)], script
    assert ".venv/" in (ROOT / ".gitignore").read_text().splitlines()


def _layout(tmp_path: Path) -> Path:
    """A checkout with deploy/venv.sh, a pyproject.toml and a requirements file that installs nothing."""
    root = tmp_path / "checkout"
    (root / "deploy").mkdir(parents=True)
    shutil.copy(ROOT / "deploy/venv.sh", root / "deploy/venv.sh")
    (root / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (root / "requirements.txt").write_text("# nothing to install\n")
    return root


def _run(root: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = 'source deploy/venv.sh requirements.txt && echo "python=$POSVIZ_PYTHON"'
    return subprocess.run(["bash", "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=300)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VIRTUAL_ENV")}
    return env | {"PYTHON": sys.executable} | extra


def test_the_environment_is_made_once_and_reinstalled_only_when_the_requirements_change(tmp_path):
    root = _layout(tmp_path)
    first = _run(root, _env())
    assert first.returncode == 0, first.stderr
    assert f"python={root}/.venv/bin/python" in first.stdout
    assert "making the virtual environment" in first.stderr and "installing requirements.txt" in first.stderr
    venv_python = root / ".venv/bin/python"
    prefix = subprocess.run([venv_python, "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True)
    assert Path(prefix.stdout.strip()).resolve() == (root / ".venv").resolve()

    second = _run(root, _env())
    assert second.returncode == 0 and second.stderr == "", second.stderr

    (root / "requirements.txt").write_text("# nothing to install, said again\n")
    third = _run(root, _env())
    assert "installing requirements.txt" in third.stderr and "making the virtual" not in third.stderr


def test_a_missing_venv_module_is_installed_from_debian(tmp_path):
    """A Python whose venv module cannot make an environment (Debian without python3-venv) gets python3-venv from
    apt-get; here a stand-in apt-get records the call and a stand-in python3 lacks venv until it ran."""
    root = _layout(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    installed = tmp_path / "installed"
    log = tmp_path / "apt.log"
    fake_python = bin_dir / "python3"
    fake_python.write_text(
        textwrap.dedent(f"""\
        #!/usr/bin/env bash
        if [ "$1" = "-c" ] && [[ "$2" == *ensurepip* ]] && [ ! -e {installed} ]; then exit 1; fi
        exec {sys.executable} "$@"
        """)
    )
    fake_apt = bin_dir / "apt-get"
    fake_apt.write_text(f'#!/usr/bin/env bash\necho "$@" >> {log}\ntouch {installed}\n')
    fake_sudo = bin_dir / "sudo"
    fake_sudo.write_text('#!/usr/bin/env bash\nexec "$@"\n')
    for tool in (fake_python, fake_apt, fake_sudo):
        tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    env = _env(PATH=f"{bin_dir}:{os.environ['PATH']}")
    del env["PYTHON"]
    result = _run(root, env)
    assert result.returncode == 0, result.stderr
    assert "install -y -qq python3-venv" in log.read_text()
    assert (root / ".venv/bin/python").exists()


@pytest.mark.parametrize("python", ["/nonexistent/python3", "old"])
def test_no_usable_python_is_one_sentence(tmp_path, python):
    root = _layout(tmp_path)
    if python == "old":
        old = tmp_path / "python3.9"
        old.write_text("#!/usr/bin/env bash\n[ \"$1\" = -V ] && echo 'Python 3.9.2' && exit 0\nexit 1\n")
        old.chmod(0o755)
        python = str(old)
    result = _run(root, _env(PYTHON=python))
    assert result.returncode == 1
    assert result.stderr.startswith("posviz: ") and result.stderr.count("\n") == 1
    assert "3.11" in result.stderr and not (root / ".venv").exists()
