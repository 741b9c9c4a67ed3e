#!/usr/bin/env bash
# ctest ci.gpu_acceptance.no_device: where no GPU is, ci/gpu-acceptance.sh
# exits 77 with exactly one line naming why, and writes nothing. Where a
# GPU is, this test skips (77): the acceptance itself runs there.
set -uo pipefail
ci=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fail() { echo "no-device-test: $*" >&2; exit 1; }

probe=$(bash "$ci/gpu-acceptance.sh" --probe 2>&1)
rc=$?
[ $rc -eq 0 ] && { echo "a GPU is here ($probe): the no-device answer cannot be checked"; exit 77; }
[ $rc -eq 77 ] || fail "--probe exited $rc, not 0 or 77: $probe"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
said=$(bash "$ci/gpu-acceptance.sh" --out "$out/gpu" 2>&1)
rc=$?
[ $rc -eq 77 ] || fail "exited $rc without a GPU, not 77: $said"
[ "$(printf '%s\n' "$said" | wc -l)" -eq 1 ] || fail "said more than one line: $said"
[[ $said == "gpu-acceptance.sh: no GPU here ("*"): skipped"* ]] || fail "said '$said', not why it skipped"
[ ! -e "$out/gpu" ] || fail "wrote $out/gpu before knowing there is no GPU"
echo "ok: $said"
