#!/usr/bin/env bash
# Installs what mapp needs on Debian 12 (as root), skipping what is there.
set -euo pipefail
packages=(build-essential cmake pkg-config git
          openmpi-bin libopenmpi-dev libhdf5-openmpi-dev hdf5-tools
          libbenchmark-dev gnuplot-nox libjansson-dev libfyaml-dev libcmocka-dev
          libfftw3-dev libxxhash-dev zlib1g-dev libzstd-dev libzfp-dev liburing-dev libsqlite3-dev python3 python3-venv
          libxml2-utils jq python3-yaml
          libsimgrid-dev libhdf5-dev
          chromium ccache ninja-build
          slurm-wlm munge)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "ci/install-deps.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
