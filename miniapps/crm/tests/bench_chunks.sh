#!/usr/bin/env bash
# bench_chunks.sh BENCH WORKDIR: mapp-crm-bench's PCOLS rows at 133 CRMs
# on omp run end to end, once each, and each runs the blocks it names
# (its chunk counter: 16, 64, then 256 and all cut to the 133 CRMs); no
# timing is judged here.
set -u
bench=$1 work=$2
mkdir -p "$work" && cd "$work" || exit 1
OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive "$bench" --benchmark_filter='^crm_chunk/omp/[^/]+/133/' \
  --benchmark_min_time=0.01 --benchmark_format=json >b.json 2>b.err ||
  { cat b.err; echo "FAIL: the bench exited $?"; exit 1; }
python3 - b.json <<'PY'
import json, sys
rows = {b["name"].removesuffix("/real_time"): b for b in json.load(open(sys.argv[1]))["benchmarks"]}
want = {"16": 16, "64": 64, "256": 133, "all": 133}
bad = []
for chunk, blocks in want.items():
    b = rows.get(f"crm_chunk/omp/{chunk}/133")
    if b is None or b.get("error_occurred"):
        bad.append(f"crm_chunk/omp/{chunk}/133: {'missing' if b is None else b.get('error_message')}")
    elif b["chunk"] != blocks or b["instances"] != 133 or not b["items_per_second"] > 0:
        bad.append(f"crm_chunk/omp/{chunk}/133: blocks of {b['chunk']:.0f} of {b['instances']:.0f} CRMs, "
                   f"{b['items_per_second']:.3g} column-steps/s; expected blocks of {blocks} of 133")
    else:
        print(f"ok crm_chunk/omp/{chunk}/133: blocks of {blocks}, {b['items_per_second']:.3g} column-steps/s")
for line in bad:
    print("FAIL:", line)
sys.exit(1 if bad else 0)
PY
