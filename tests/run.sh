#!/usr/bin/env bash
# Install what the test suite needs on a fresh machine, then run the whole suite.
# Debian's chromium drives the end-to-end tests (Playwright never downloads a browser).
# Arguments are passed to pytest, e.g. `bash tests/run.sh tests/core -x`.
set -euo pipefail
cd "$(dirname "$0")/.."

# fonts-noto-cjk lets the browser draw the Chinese pages (the screenshots would show empty boxes otherwise);
# nginx is the proxy of deploy/ that the deploy tests start.
if [ ! -x "${POSVIZ_CHROMIUM:-/usr/bin/chromium}" ] || ! fc-list 2>/dev/null | grep -qi "noto sans cjk" \
  || [ ! -x /usr/sbin/nginx ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium fonts-noto-cjk nginx >/dev/null
fi

python -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
python -m pytest "$@"
