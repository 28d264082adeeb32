#!/usr/bin/env bash
# Make the project's virtual environment (.venv in the checkout) hold what a requirements file asks for, and put its
# interpreter in $POSVIZ_PYTHON. Sourced by deploy/start.sh and tests/run.sh: `source deploy/venv.sh FILE`.
#
# A stock Debian or Ubuntu Python refuses `pip install` outside a virtual environment (externally-managed-environment)
# and may have no `python`, only `python3`, and no venv module (Debian's python3-venv): this makes the environment
# with $PYTHON (default python3), installs python3-venv with apt-get when the venv module cannot make one, and runs
# pip only when the requirements file or pyproject.toml changed since the last install (a stamp in .venv), so a
# second run starts at once.
set -euo pipefail

posviz_requirements="${1:?usage: source deploy/venv.sh REQUIREMENTS_FILE}"
posviz_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
posviz_venv="$posviz_root/.venv"
posviz_base_python="${PYTHON:-python3}"

posviz_apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

if [ ! -x "$posviz_venv/bin/python" ]; then
  if ! command -v "$posviz_base_python" >/dev/null 2>&1; then
    echo "posviz: no $posviz_base_python on this machine; install Python 3.11 or newer (or set PYTHON)" >&2
    exit 1
  fi
  if ! "$posviz_base_python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "posviz: $posviz_base_python is $("$posviz_base_python" -V 2>&1); posviz needs Python 3.11 or newer (set PYTHON)" >&2
    exit 1
  fi
  if ! "$posviz_base_python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
    echo "posviz: installing Debian's python3-venv to make the virtual environment" >&2
    posviz_apt_install python3-venv
  fi
  echo "posviz: making the virtual environment $posviz_venv" >&2
  "$posviz_base_python" -m venv "$posviz_venv"
fi

POSVIZ_PYTHON="$posviz_venv/bin/python"
posviz_stamp="$posviz_venv/.posviz-$(basename "$posviz_requirements").sha256"
posviz_wanted="$(cat "$posviz_root/$posviz_requirements" "$posviz_root/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$posviz_stamp" 2>/dev/null)" != "$posviz_wanted" ]; then
  echo "posviz: installing $posviz_requirements into $posviz_venv" >&2
  (cd "$posviz_root" && "$POSVIZ_PYTHON" -m pip install --quiet --disable-pip-version-check -r "$posviz_requirements")
  echo "$posviz_wanted" >"$posviz_stamp"
fi
export POSVIZ_PYTHON
