#!/usr/bin/env bash
# Set up robomemory in ./.venv.  Usage: bash scripts/setup.sh [EXTRAS]
#   EXTRAS is a comma list of pyproject extras (default: local). "all" = every extra a test
#   needs (the simulated arm too), so the test run skips only what needs a server.
#   "local" = the embedded model and the worlds it plays (extras local,worlds).
#   "native" = local, then llama.cpp's server built for this CPU (several minutes on two cores).
# CPU torch first: PyPI's torch for Linux pulls several GB of CUDA packages. It comes from
# $ROBOMEMORY_TORCH_INDEX (default: PyTorch's CPU wheel index), unless the venv has it already
# or pip's own configuration finds it without an index (a local wheel folder, find-links);
# ROBOMEMORY_TORCH_INDEX= (empty) leaves the choice to pip's configuration.
# ROBOMEMORY_SETUP_REPORT=FILE (an absolute path): install nothing but the venv; write pip's
# report (JSON) of what this setup would install into FILE: torch, from where it would come, and
# the package with its extras, resolved together (pip's --dry-run --report).
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-local}"
native=0
if [ "$extras" = "native" ]; then
  extras="local"
  native=1
fi
[ "$extras" = "local" ] && extras="local,worlds"
[ "$extras" = "all" ] && extras="local,dev,robot,sim,worlds,viz,neo4j,mem0,postgres"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
report="${ROBOMEMORY_SETUP_REPORT:-}"
if [ -z "$report" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
fi
torch_spec="torch==2.13.0"
torch_index="${ROBOMEMORY_TORCH_INDEX-https://download.pytorch.org/whl/cpu}"
torch=()  # pip's arguments for torch: none when installed, else its spec and where it comes from
if .venv/bin/python -c 'import importlib.metadata as m, sys
sys.exit(m.version("torch").split("+")[0] != sys.argv[1])' "${torch_spec#torch==}" 2>/dev/null; then
  echo "torch: ${torch_spec} already installed"
elif [ -z "$torch_index" ] || .venv/bin/python -m pip install -q --dry-run --no-deps --no-index \
    "$torch_spec" >/dev/null 2>&1; then
  torch=("$torch_spec")  # pip's configuration finds it
else
  torch=(--index-url "$torch_index" "$torch_spec")
fi
if [ -n "$report" ]; then
  # one resolution, nothing installed: the CPU index beside the package's where torch is from it
  if [ "${torch[0]-}" = "--index-url" ]; then
    torch=(--extra-index-url "$torch_index" "$torch_spec")
  fi
  PYTHONWARNINGS=ignore .venv/bin/python -m pip install -q --dry-run --report "$report" \
    ${torch[@]+"${torch[@]}"} -e ".[${extras}]"
  echo "nothing installed; what setup would install (pip's report): $report"
  exit 0
fi
if [ "${#torch[@]}" -gt 0 ]; then
  .venv/bin/python -m pip install -q "${torch[@]}"
fi
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
