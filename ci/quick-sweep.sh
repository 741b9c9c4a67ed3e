#!/usr/bin/env bash
# The README's main job: install, build, run the quick sweep of every built
# mini-app with baseline checks, then plots and a report.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
ci/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
mkdir -p results # --junit writes into a folder that exists
build/bin/mapp sweep harness/sweeps/quick.yaml --out results --junit results/quick-junit.xml || status=$?
build/bin/mapp report results/quick
echo
echo "results: $(pwd)/results/quick/results.jsonl"
echo "report:  $(pwd)/results/quick/report.md"
echo "plots:   $(pwd)/results/quick/plots/"
echo "junit:   $(pwd)/results/quick-junit.xml"
exit $status
