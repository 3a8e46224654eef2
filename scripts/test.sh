#!/usr/bin/env bash
# Sets up everything the tests need on a fresh machine, then runs every test.
# Installs: Python packages (requirements-dev.txt, which includes llama-cpp-python's server: it compiles once,
# ~5 minutes on 2 cores) and Debian's chromium for the browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
exec python3 -m pytest "$@"
