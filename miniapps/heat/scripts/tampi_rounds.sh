#!/usr/bin/env bash
# tampi_rounds.sh BUILD_BIN OUT_DIR [ROUNDS]: the tasks variant with the
# polling task, the polling thread (--poller thread) and in blocking mode
# (--tampi blocking), against mpi, in alternating rounds (each round runs
# every configuration once), each run the fastest of --min-time 0.5; prints
# per shape and mode the median rate and the median ratio over the same
# round's mpi run, [smallest, largest].
#   small2:  --size small, 64^2 blocks, 2 ranks x 1 thread (the quick sweep's headline)
#   medium1: --size medium, 1 rank x 2 threads
#   medium2: --size medium, 2 ranks x 1 thread
set -euo pipefail
bin=$1 out=$2 rounds=${3:-7}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_osc=^pt2pt OMP_WAIT_POLICY=passive
rm -rf "$out" && mkdir -p "$out"
one() { # NAME RANKS ARGS...
  local name=$1 np=$2
  shift 2
  rm -f "$out/one.json"
  mpirun -q -np "$np" "$bin/mapp-heat" "$@" --quiet --min-time 0.5 --result "$out/one.json"
  cat "$out/one.json" >>"$out/$name.jsonl"
}
for _ in $(seq "$rounds"); do
  for shape in "small2:2:1:--size small --block-rows 64 --block-cols 64" "medium1:1:2:--size medium" \
               "medium2:2:1:--size medium"; do
    IFS=: read -r tag np threads args <<<"$shape"
    # shellcheck disable=SC2086
    {
      one "$tag.mpi" "$np" --variant mpi $args
      one "$tag.task" "$np" --variant tasks --backend omp --threads "$threads" $args
      one "$tag.thread" "$np" --variant tasks --backend omp --threads "$threads" --poller thread $args
      one "$tag.blocking" "$np" --variant tasks --backend omp --threads "$threads" --tampi blocking $args
    }
  done
done
python3 - "$out" <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
rate = lambda name: [json.loads(l)["fom"]["value"] for l in open(os.path.join(out, name + ".jsonl"))]
for tag in ("small2", "medium1", "medium2"):
    base = rate(tag + ".mpi")
    for mode in ("mpi", "task", "thread", "blocking"):
        r = rate(tag + "." + mode)
        q = [a / b for a, b in zip(r, base)]
        print(f"{tag:8s} {mode:9s} {statistics.median(r):.3g} cell-updates/s, over mpi {statistics.median(q):.2f} "
              f"[{min(q):.2f}, {max(q):.2f}], {len(r)} rounds")
PY
