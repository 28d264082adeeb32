#!/usr/bin/env bash
# Install what the test suite needs on a fresh machine, then run the whole suite: the README's second command.
# The Python packages go into the project's virtual environment (.venv; deploy/venv.sh), as the first command's do.
# Debian's chromium drives the end-to-end tests (Playwright never downloads a browser).
# Arguments are passed to pytest, e.g. `bash tests/run.sh tests/core -x`.
set -euo pipefail
cd "$(dirname "$0")/.."

source deploy/venv.sh requirements-test.txt

# fonts-noto-cjk lets the browser draw the Chinese pages (the screenshots would show empty boxes otherwise);
# nginx is the proxy of deploy/ that the deploy tests start.
if [ ! -x "${POSVIZ_CHROMIUM:-/usr/bin/chromium}" ] || ! fc-list 2>/dev/null | grep -qi "noto sans cjk" \
  || [ ! -x /usr/sbin/nginx ]; then
  posviz_apt_install chromium fonts-noto-cjk nginx
fi

exec "$POSVIZ_PYTHON" -m pytest "$@"
