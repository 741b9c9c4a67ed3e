#!/usr/bin/env bash
# The README's test command: install, build, run the whole ctest suite.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
ci/build.sh
cd build
ctest --output-on-failure -j "$(nproc)" "$@"
