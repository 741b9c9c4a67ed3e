#!/usr/bin/env bash
# Builds the project with CUDA and packs what the GPU machine needs to run
# it. The GPU machine has the CUDA toolkit but no MPI, HDF5, FFTW, jansson,
# libfyaml, Google Benchmark or CMake.
#
#   ci/gpu-bundle.sh build-gpu .gpu            # from the project's root
#   then carry .gpu and run there:  bash .gpu/env.sh ci/gpu-acceptance.sh
#
# The bundle holds:
#   payload.tgz  bin/ (the mapp programs, the test programs the cuda tests
#                run, mpirun, h5diff and h5ls, mapp-gpu-info), lib/ (their non-CUDA shared
#                libraries) and openmpi/ (Open MPI's plugins), compressed:
#                they travel in a third of the space; env.sh unpacks them
#                once, outside the bundle
#   src/         baselines/, harness/sweeps/, plots/, the stencil headers
#                its generated programs include, the apps' tests/ folders,
#                ci/gpu-acceptance.sh and ci/gpu/ (MAPP_SOURCE_DIR there)
#   ctest/       every `cuda`-labelled ctest test as NAME.sh (no ctest there)
#   env.sh       runs a command with all of it on PATH and LD_LIBRARY_PATH
#
# BUILD_DIR is configured with the `cuda` preset when it has no CMake cache
# yet; an existing one must have CUDA on and sm_90 among its architectures.
# MAPP_BUNDLE_JOBS sets the build's parallelism (default 2).
#
# CUDA's own libraries (cudart, cuFFT, ...) are not packed: the GPU machine
# has the same CUDA 13.0. glibc is not packed either: the GPU machine's is
# newer. The bundle must stay well under 64 MiB: that limit holds for the
# whole working tree a device call carries, the bundle included.
set -euo pipefail

usage="usage: ci/gpu-bundle.sh BUILD_DIR OUT_DIR"
die() { echo "gpu-bundle.sh: $*" >&2; exit 2; }
[ $# -eq 2 ] || die "$usage"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$1
out=$2
limit_mib=48 # leaves the rest of the 64 MiB to the working tree
stage=

configure_and_build() {
  [ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    (cd "$root" && cmake --preset cuda -B "$build" >/dev/null) || die "configuring $build with the cuda preset failed"
  fi
  grep -q '^CMAKE_CUDA_COMPILER:[A-Z]*=/' "$build/CMakeCache.txt" ||
    die "$build was configured without CUDA: use a fresh folder (configured here with the cuda preset)"
  local archs
  archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt")
  [[ ";$archs;" == *";90;"* || ";$archs;" == *";90-real;"* ]] ||
    die "$build targets CUDA architectures '$archs': the H100 needs 90 among them"
  cmake --build "$build" -j "${MAPP_BUNDLE_JOBS:-2}" >/dev/null || die "building $build failed"
}

pack_programs() {
  mkdir -p "$stage/bin" "$stage/lib" "$stage/openmpi"
  cp "$build"/bin/mapp* "$stage/bin/"
  # The acceptance run's device probe (static CUDA runtime: no library to pack).
  nvcc -O2 -o "$stage/bin/mapp-gpu-info" "$root/ci/gpu/device-info.cu" || die "compiling ci/gpu/device-info.cu failed"
  cp /usr/bin/orterun "$stage/bin/mpirun"
  # The tests compare answers with HDF5's own tools (bit for bit).
  local tool
  for tool in h5diff h5ls; do
    cp "$(command -v $tool)" "$stage/bin/" || die "$tool not found: install hdf5-tools"
  done
  cp -r /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/. "$stage/openmpi/"
}

# Every shared library the programs and plugins load, except glibc's and
# CUDA's (the GPU machine has its own). Only ELF files have libraries: the
# peers' launchers in bin/ are scripts, and ldd fails on them. No pipeline
# around ldd or cp, so a failure stops the script with die's message rather
# than a pipeline's silent status under `set -e`.
is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

pack_libraries() {
  local skip='^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libcuda|libcudart|libcufft|libcublas|libcurand|libnvrtc|linux-vdso)\.'
  local f lib base libs=$stage/libraries.txt found=$stage/ldd.txt
  : >"$libs"
  for f in "$stage"/bin/* "$stage"/openmpi/*.so; do
    is_elf "$f" || continue
    ldd "$f" >"$found" 2>&1 || die "ldd $f failed: $(head -c 300 "$found")"
    awk '/=> \//{print $3}' "$found" >>"$libs"
  done
  while read -r lib; do
    base=$(basename "$lib")
    [[ $base =~ $skip ]] || cp -L "$lib" "$stage/lib/$base" || die "copying $lib into the bundle failed"
  done < <(sort -u "$libs")
  rm -f "$libs" "$found"
}

# What the programs read from MAPP_SOURCE_DIR, the stencil's generated
# programs include, and the scripts the cuda tests and the acceptance run.
pack_sources() {
  local src=$out/src
  mkdir -p "$src/miniapps/stencil" "$src/harness" "$src/ci"
  cp -r "$root/baselines" "$root/plots" "$src/"
  cp -r "$root/harness/sweeps" "$src/harness/"
  cp "$root"/miniapps/stencil/*.h "$src/miniapps/stencil/"
  for app in common crm stencil subgraph snapshots; do
    mkdir -p "$src/miniapps/$app"
    cp -r "$root/miniapps/$app/tests" "$src/miniapps/$app/"
  done
  cp "$root/ci/gpu-acceptance.sh" "$src/ci/"
  cp -r "$root/ci/gpu" "$src/ci/"
}

# Each `cuda`-labelled ctest test as ctest/NAME.sh, with this machine's paths
# replaced by @BIN@ (the unpacked bin), @SRC@ (the bundle's src) and @WORK@
# (a writable folder the acceptance run chooses), and the test programs
# those scripts run added to the payload.
pack_cuda_tests() {
  mkdir -p "$out/ctest"
  local json=$stage/tests.json abs_build
  abs_build=$(cd "$build" && pwd)
  (cd "$build" && ctest --show-only=json-v1 -L '^cuda$') >"$json"
  [ "$(jq '.tests | length' "$json")" -gt 0 ] || die "$build has no cuda-labelled tests"
  jq -r '.tests[].name' "$json" | while read -r name; do
    write_test_script "$json" "$name" | sed -e "s#$abs_build/bin#@BIN@#g" -e "s#$abs_build#@WORK@#g" \
      -e "s#$root#@SRC@#g" >"$out/ctest/$name.sh"
  done
  grep -oh '@BIN@/[A-Za-z0-9_.-]*' "$out"/ctest/*.sh | sort -u | while read -r ref; do
    [ -e "$stage/bin/${ref#@BIN@/}" ] || cp "$build/bin/${ref#@BIN@/}" "$stage/bin/" || die "no $build/bin/${ref#@BIN@/}"
  done
}

# One test as a script: its environment, working folder and command.
write_test_script() {
  local json=$1 name=$2
  local t='.tests[] | select(.name == $n)'
  local props="$t | [.properties[]? | {(.name): .value}] | add // {}"
  local timeout wd
  timeout=$(jq -r --arg n "$name" "$props | .TIMEOUT // 120" "$json")
  wd=$(jq -r --arg n "$name" "$props | .WORKING_DIRECTORY // empty" "$json")
  echo "#!/usr/bin/env bash"
  echo "# ctest test $name, generated by ci/gpu-bundle.sh; timeout $timeout s"
  echo "# MAPP_TEST_TIMEOUT=$timeout"
  jq -r --arg n "$name" "$props | .ENVIRONMENT // [] | .[] | select(length > 0)" "$json" |
    while IFS= read -r kv; do printf 'export %q\n' "$kv"; done
  [ -z "$wd" ] || printf 'mkdir -p %q && cd %q\n' "$wd" "$wd"
  printf 'exec'
  jq -r --arg n "$name" "$t | .command[]" "$json" | while IFS= read -r arg; do printf ' %q' "$arg"; done
  echo
}

write_payload() {
  tar -czf "$out/payload.tgz" -C "$stage" bin lib openmpi || die "packing $out/payload.tgz failed"
}

# env.sh unpacks the payload outside the bundle (so the bundle never grows
# past what travels), once per payload: the folder is named by its checksum.
write_env() {
  cat >"$out/env.sh" <<'ENV'
#!/usr/bin/env bash
# Runs a command with the packed programs and libraries on the GPU machine.
B=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
U=${TMPDIR:-/tmp}/mapp-gpu-$(id -u)-$(cksum <"$B/payload.tgz" | cut -d' ' -f1)
if [ ! -e "$U/.unpacked" ]; then
  mkdir -p "$U" && tar -xzf "$B/payload.tgz" -C "$U" && touch "$U/.unpacked" ||
    { echo "env.sh: cannot unpack $B/payload.tgz into $U" >&2; exit 3; }
fi
CUDA_LIB=$(dirname "$(find /usr/local -name 'libcudart.so.13' 2>/dev/null | head -n1)")
NVCC=$(command -v nvcc || find /usr/local -path '*/bin/nvcc' 2>/dev/null | head -n1)
export LD_LIBRARY_PATH="$U/lib:$CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$U/bin${NVCC:+:$(dirname "$NVCC")}:$PATH"
export OMPI_MCA_mca_base_component_path="$U/openmpi" OMPI_MCA_ess_singleton_isolated=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PMIX_MCA_pcompress_base_silence_warning=1
export MAPP_BIN_DIR="$U/bin" MAPP_SOURCE_DIR="$B/src" MAPP_BUNDLE="$B"
export MAPP_STENCIL_INCLUDE="$B/src/miniapps/stencil"
[ -z "$NVCC" ] || export MAPP_STENCIL_NVCC="$NVCC"
exec "$@"
ENV
  chmod +x "$out/env.sh"
}

check_size() {
  local mib
  mib=$(du -sm "$out" | cut -f1)
  [ "$mib" -le "$limit_mib" ] || die "$out is $mib MiB: over the $limit_mib MiB that leave room for the working tree"
  echo "gpu-bundle.sh: $out: $mib MiB, $(ls "$stage/bin" | wc -l) programs, $(ls "$stage/lib" | wc -l) libraries," \
    "$(ls "$out/ctest" | wc -l) cuda tests"
}

configure_and_build
rm -rf "$out"
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pack_programs
pack_cuda_tests
pack_libraries
pack_sources
write_payload
write_env
check_size
