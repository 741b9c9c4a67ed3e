#!/usr/bin/env bash
# Configures and builds the default preset (Release; CUDA when nvcc is on PATH),
# and the simgrid preset (SimGrid SMPI, build-sim/: the five apps' serial
# backends, about 25 s on one core), whose simulated runs the default
# build's ctest runs (APP.simgrid.strong64, harness.simulated.sweep).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"
cmake --preset simgrid >/dev/null
cmake --build --preset simgrid -j "$(nproc)"
