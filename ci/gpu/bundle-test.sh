#!/usr/bin/env bash
# ctest ci.gpu_bundle: ci/gpu-bundle.sh packs the build it runs in, so a
# change that breaks the bundle (the next GPU lent would be lost to it) is
# seen where no GPU is. Where the build has CUDA with sm_90: the bundle is
# made (payload, env.sh, one script per cuda-labelled test, under its 48
# MiB), and a planted failure inside it (a tar that fails) stops it with a
# line naming what failed, not silently. Skipped (77) where the build has
# no CUDA or no sm_90.
#   bundle-test.sh BUILD_DIR
set -uo pipefail
ci=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:?BUILD_DIR}" && pwd)
fail() { echo "bundle-test: $*" >&2; exit 1; }
cache=$build/CMakeCache.txt
grep -q '^CMAKE_CUDA_COMPILER:[A-Z]*=/' "$cache" || { echo "skipped: $build has no CUDA"; exit 77; }
archs=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$cache")
[[ ";$archs;" == *";90;"* || ";$archs;" == *";90-real;"* ]] || { echo "skipped: $build targets '$archs', no sm_90"; exit 77; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash "$ci/gpu-bundle.sh" "$build" "$work/gpu" >"$work/log" 2>&1 || fail "exited $?: $(tail -n 3 "$work/log")"
for f in payload.tgz env.sh src/baselines; do [ -e "$work/gpu/$f" ] || fail "the bundle has no $f"; done
tests=$(ls "$work/gpu/ctest"/*.sh 2>/dev/null | wc -l)
[ "$tests" -gt 0 ] || fail "the bundle has no cuda test scripts"
mib=$(du -sm "$work/gpu" | cut -f1)
[ "$mib" -lt 48 ] || fail "the bundle is $mib MiB, over 48"
tar -tzf "$work/gpu/payload.tgz" >"$work/payload.txt" || fail "payload.tgz cannot be listed"
grep -qx 'bin/mapp-crm' "$work/payload.txt" || fail "payload.tgz holds no bin/mapp-crm"
echo "ok: bundled $build: $mib MiB, $tests cuda test scripts"

# planted: a tar that fails while packing
mkdir -p "$work/plant"
printf '#!/bin/sh\nexit 1\n' >"$work/plant/tar"
chmod +x "$work/plant/tar"
PATH="$work/plant:$PATH" bash "$ci/gpu-bundle.sh" "$build" "$work/planted" >"$work/planted.log" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "a failing tar was not noticed (exit 0)"
grep -q 'gpu-bundle.sh: packing .*payload.tgz failed' "$work/planted.log" ||
  fail "a failing tar stopped it (exit $rc) without saying so: $(tail -n 2 "$work/planted.log")"
echo "ok: a failing tar: exit $rc, '$(grep -m1 'gpu-bundle.sh:' "$work/planted.log")'"
