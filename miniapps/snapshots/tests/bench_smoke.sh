#!/usr/bin/env bash
# mapp-snapshots-bench on a small problem, every case once: the bench runs
# end to end, and its own answers hold (no timing is judged here): every
# lossless case's gradient equals the in-memory one (rel_err 0), every zfp
# case differs by less than 1e-3 of max |g|, every disk case put snapshots
# on disk, and the io_uring cases say whether io_uring ran.
# Usage: bench_smoke.sh BENCH WORKDIR
set -u
bench=$1 work=$2
mkdir -p "$work" && cd "$work" || exit 1
MAPP_SNAP_BENCH_NX=200 MAPP_SNAP_BENCH_NZ=60 MAPP_SNAP_BENCH_NT=300 TMPDIR="$work" OMP_NUM_THREADS=1 \
  "$bench" --benchmark_filter='forward|gradient' --benchmark_min_time=0.01 --benchmark_format=json >b.json 2>b.err \
  || { cat b.err; echo "FAIL: the bench exited $?"; exit 1; }
python3 - b.json <<'PY'
import json, sys
rows = {b["name"].removesuffix("/real_time"): b for b in json.load(open(sys.argv[1]))["benchmarks"]}
bad = []
def need(cond, what):
    if not cond: bad.append(what)
for name in ("forward/nosave", "forward/memory", "gradient/memory/none", "gradient/stream/host",
             "gradient/stream/disk", "gradient/stream/host/zfp-1e-6", "gradient/revolve/20-checkpoints"):
    need(name in rows, f"{name}: missing")
for name, b in rows.items():
    need(not b.get("error_occurred"), f"{name}: {b.get('error_message')}")
    if not name.startswith("gradient/"):
        continue
    err = b["rel_err"]
    if "zfp" in name:
        need(0 < err < 1e-3, f"{name}: rel_err {err} not in (0, 1e-3)")
    else:
        need(err == 0, f"{name}: rel_err {err}, expected 0 (lossless)")
    if "/disk" in name and "32MiB" not in name:
        need(b["on_disk"] > 0, f"{name}: nothing on disk")
    need(b["uring"] in (0, 1) and (b["uring"] == 0 or "uring" in name), f"{name}: uring {b['uring']}")
    print(f"ok {name}: rel_err {err:.3g}, on disk {b['on_disk']:.0f}, uring {b['uring']:.0f}")
for line in bad:
    print("FAIL:", line)
sys.exit(1 if bad else 0)
PY
