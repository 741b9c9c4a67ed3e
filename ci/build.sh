#!/usr/bin/env bash
# Configures and builds the default preset (Release; CUDA when nvcc is on PATH),
# and mapp-heat of the simgrid preset (SimGrid SMPI, build-sim/), whose
# simulated runs the default build's ctest runs (heat.simgrid.strong64; the
# other apps' simulated tests skip unless `cmake --build --preset simgrid`
# built them too: the suite's 12 minutes on 2 cores leave no room for it).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"
cmake --preset simgrid >/dev/null
cmake --build --preset simgrid -j "$(nproc)" --target mapp-heat
