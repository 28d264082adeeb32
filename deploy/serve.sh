#!/usr/bin/env bash
# Serve posviz to a class: N app processes behind nginx on one port. Usage: deploy/serve.sh N [PORT] [options]
# (deploy/serve.sh --help lists the options; deploy/README.md says when to use it). Installs nothing: it needs the
# app's requirements and Debian's nginx (sudo apt-get install nginx), and says so when nginx is missing. Prints
# "posviz: http://127.0.0.1:PORT" once every process answers; Ctrl-C or SIGTERM stops them all.
set -euo pipefail
cd "$(dirname "$0")/.."
# The project's virtual environment (the README's first command makes it), else the Python on the PATH.
PYTHON="${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || command -v python || command -v python3)}"
exec "$PYTHON" deploy/serve.py "$@"
