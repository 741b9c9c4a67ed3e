#!/usr/bin/env bash
# The README's test command: install, build, run the whole ctest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
# The peers' Python venv (Devito for snapshots) from PyPI; quick when made.
# Without it the snapshots.peer tests skip, saying so.
ci/peer-venv.sh || echo "ci/test.sh: warning: ci/peer-venv.sh failed: the snapshots.peer tests will skip" >&2
ci/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" "$@"
