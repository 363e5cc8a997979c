#!/usr/bin/env bash
# Set up robomemory in ./.venv.  Usage: bash scripts/setup.sh [EXTRAS]
#   EXTRAS is a comma list of pyproject extras (default: local). "all" = every extra a test
#   needs (the simulated arm too), so the test run skips only what needs a server.
#   "native" = local, then llama.cpp's server built for this CPU (several minutes on two cores).
# CPU torch first: an unpinned torch would pull several GB of CUDA packages.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-local}"
native=0
if [ "$extras" = "native" ]; then
  extras="local"
  native=1
fi
[ "$extras" = "all" ] && extras="local,dev,robot,sim,worlds,viz,neo4j,mem0,postgres"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q torch==2.13.0
# PYTHONWARNINGS: no setuptools "Editable installation" warning block from the build backend
PYTHONWARNINGS=ignore .venv/bin/python -m pip install -q -e ".[${extras}]"
echo "robomemory installed in .venv with extras: ${extras}"
if [ "$native" = 1 ]; then
  # the compilers it needs, from Debian's packages when this is root on Debian
  if ! command -v cmake >/dev/null || ! command -v c++ >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cmake g++ ninja-build
    fi
  fi
  .venv/bin/robomemory native --build
fi
