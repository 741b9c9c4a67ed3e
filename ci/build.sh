#!/usr/bin/env bash
# Configures and builds the default preset (Release; CUDA when nvcc is on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)"
