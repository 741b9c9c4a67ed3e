#!/usr/bin/env bash
# The README's test command: install, build, run the whole ctest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
# The peers' Python venv (Devito for snapshots) from PyPI; quick when made.
# Without it the snapshots.peer tests skip, saying so.
ci/peer-venv.sh || echo "ci/test.sh: warning: ci/peer-venv.sh failed: the snapshots.peer tests will skip" >&2
# The analysis venv (Thicket, Hatchet, Extra-P) for mapp export and mapp
# model's tests; without it those tests skip, saying so.
ci/analysis-venv.sh || echo "ci/test.sh: warning: ci/analysis-venv.sh failed: the harness.export and harness.model tests will skip" >&2
ci/build.sh
cd build
# Tests labelled slow (a peer's cold compile of minutes) are left out; run
# them with: cd build && ctest -L slow
ctest --output-on-failure -j "$(nproc)" -LE slow "$@"
