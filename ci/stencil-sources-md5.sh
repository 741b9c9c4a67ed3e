#!/usr/bin/env bash
# ci/stencil-sources-md5.sh BUILD_DIR
#
# The md5 of every source mapp-stencil generates, one line per source,
# sorted: "MD5  PROGRAM/BACKEND/DEBUG/CLASS/step.c|cu". For a refactor of
# the generator, whose output must not change byte for byte: run it before
# and after and diff the two.
#
# Every program (--program's choices) is generated for every code-path
# class (16: the edges w, e, s, n a rank's block touches, from a 3x3, a 1x1,
# a 1x3 and a 3x1 layout), on each backend that generates code (serial and
# omp; cuda, see below), without debug passes and with all of them (--check
# nan, --check negative= every field, --trace, --progress: another plan and
# the debug code). It runs `--mode build` into a temporary cache with a
# stand-in compiler (MAPP_STENCIL_CC/NVCC): the cache keeps each entry's
# step.c, and nothing is compiled, so it takes seconds and needs no GPU.
#
# CUDA: mapp-stencil refuses --backend cuda on a machine without a GPU, so
# there the CUDA sources come from test_stencil_cuda_build (built where nvcc
# is), which generates classes interior and ws of every program without
# debug passes; a note on stderr says so. With a GPU, cuda is generated like
# the CPU backends. Without either, no CUDA line.
#
# Exits 1 when a generation fails or a class is missing, 2 on bad usage.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
[ -d "$1" ] || { echo "$0: no build folder $1" >&2; exit 2; }
bin=$(cd "$1" && pwd)/bin
[ -x "$bin/mapp-stencil" ] || { echo "$0: no $bin/mapp-stencil (build the mapp-stencil target)" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# the sources of the configured defaults: no test hook or override applies
unset MAPP_STENCIL_BREAK MAPP_STENCIL_DROP MAPP_STENCIL_INCLUDE MAPP_STENCIL_CFLAGS MAPP_CACHE_DIR
work=$(mktemp -d /tmp/mapp-stencil-md5.XXXXXX)
trap 'rm -rf "$work"' EXIT

# The stand-in compiler: a version line, and an empty object where -o says.
cat >"$work/cc" <<'SH'
#!/bin/sh
[ "$1" = --version ] && { echo "stand-in compiler 1.0"; exit 0; }
while [ $# -gt 0 ]; do [ "$1" = -o ] && : >"$2"; shift; done
SH
chmod +x "$work/cc"
export MAPP_STENCIL_CC=$work/cc MAPP_STENCIL_NVCC=$work/cc

fail() { echo "$0: $*" >&2; exit 1; }

programs=$("$bin/mapp-stencil" --help | sed -n 's/^  --program \([a-z0-9|-]*\) .*/\1/p' | tr '|' ' ')
[ -n "$programs" ] || fail "no --program choices in mapp-stencil --help"

# The fields of a program, comma-separated: from the refusal of a field it
# does not have (the one place that lists them).
fields_of() {
  local refusal
  refusal=$("$bin/mapp-stencil" --program "$1" --mode build --check negative=no-such-field --cache "$work/none" 2>&1 ||
    true)
  sed -n 's/.*(fields of program [a-z0-9-]*: \(.*\))$/\1/p' <<<"$refusal" | tr -d ' '
}

# build PROGRAM BACKEND CACHE ARGS...: --mode build on each layout; the 16
# classes land in CACHE.
build() {
  local program=$1 backend=$2 cache=$3
  shift 3
  local layout ranks
  for layout in 1x1 3x3 1x3 3x1; do
    ranks=$((${layout%x*} * ${layout#*x}))
    mpirun -q -np "$ranks" "$bin/mapp-stencil" --program "$program" --backend "$backend" --mode build \
      --layout "$layout" --size tiny --cache "$cache" --quiet "$@" ||
      fail "generating $program on $backend, layout $layout ($*) failed"
  done
  local n
  n=$(find "$cache" -name manifest.json | wc -l)
  [ "$n" -eq 16 ] || fail "$program on $backend ($*): $n classes in $cache, not 16"
}

# list CACHE PREFIX: "MD5  PREFIX/CLASS/step.X" for every entry of CACHE
# (an entry is CLASS-KEY: the key hashes the source, so it is not kept).
list() {
  local entry name src
  for entry in "$1"/*/; do
    entry=${entry%/}
    name=${entry##*/}
    case $name in failed-*) fail "a failed build in $1: $name" ;; esac
    for src in "$entry"/step.c "$entry"/step.cu; do
      [ -f "$src" ] || continue
      echo "$(md5sum <"$src" | cut -d' ' -f1)  $2/${name%-*}/${src##*/}"
    done
  done
}

cuda_usable=$("$bin/mapp-stencil" --list | grep -c '"name":"cuda","built":true,"usable":true' || true)
backends="serial omp"
[ "$cuda_usable" -gt 0 ] && backends="$backends cuda"

out=$work/lines
: >"$out"
for program in $programs; do
  fields=$(fields_of "$program")
  [ -n "$fields" ] || fail "cannot list the fields of program $program"
  for backend in $backends; do
    build "$program" "$backend" "$work/$program-$backend-none"
    list "$work/$program-$backend-none" "$program/$backend/none" >>"$out"
    build "$program" "$backend" "$work/$program-$backend-debug" \
      --check nan --check "negative=$fields" --trace 1,1 --progress
    list "$work/$program-$backend-debug" "$program/$backend/debug" >>"$out"
  done
done

if [ "$cuda_usable" -eq 0 ] && [ -x "$bin/test_stencil_cuda_build" ]; then
  echo "note: no GPU here: CUDA sources from test_stencil_cuda_build (classes interior and ws, no debug)" >&2
  "$bin/test_stencil_cuda_build" "$work/cuda" >/dev/null || fail "test_stencil_cuda_build failed"
  for entry in "$work"/cuda/*/; do
    program=$(sed -n 's/^ *"program": "\(.*\)",*$/\1/p' "$entry/manifest.json")
    [ -n "$program" ] || fail "no program in $entry/manifest.json"
    name=${entry%/}
    name=${name##*/}
    [ -f "$entry/step.cu" ] || fail "no step.cu in $entry"
    echo "$(md5sum <"$entry/step.cu" | cut -d' ' -f1)  $program/cuda/none/${name%-*}/step.cu" >>"$out"
  done
elif [ "$cuda_usable" -eq 0 ]; then
  echo "note: no GPU and no test_stencil_cuda_build: no CUDA sources" >&2
fi

LC_ALL=C sort -k2 "$out"
