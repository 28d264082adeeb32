#!/usr/bin/env bash
# Install the app into the project's virtual environment (.venv; deploy/venv.sh) and start it: the README's first
# command. Arguments go to `streamlit run app.py`, e.g. `bash deploy/start.sh --server.port 8600`.
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/venv.sh requirements.txt
exec "$POSVIZ_PYTHON" -m streamlit run app.py "$@"
