#!/usr/bin/env bash
# Configures and builds the default preset (Release; CUDA when nvcc is on PATH),
# and the simgrid preset (libmapp and the apps' serial backends under SimGrid
# SMPI, build-sim/) whose simulated runs the default build's ctest runs.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"
cmake --preset simgrid >/dev/null
cmake --build --preset simgrid -j "$(nproc)"
