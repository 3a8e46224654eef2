#!/usr/bin/env bash
# Sets up everything the tests need on a fresh machine, then runs every test.
# Installs: Python packages (requirements-dev.txt, which includes llama-cpp-python's server: it compiles once,
# ~5 minutes on 2 cores), Debian's chromium for the browser tests and Debian's PostgreSQL 15 for the store tests.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
# PostgreSQL 15 for the store tests (tests/store starts its own server); without root they skip, saying why.
if [ ! -x /usr/lib/postgresql/15/bin/initdb ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 >/dev/null \
    || echo "scripts/test.sh: could not install postgresql-15; the PostgreSQL store tests will skip" >&2
fi
exec python3 -m pytest "$@"
