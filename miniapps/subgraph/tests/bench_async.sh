#!/usr/bin/env bash
# mapp-subgraph-bench's async rows, each once, briefly: they run end to end
# and the mechanism shows in their counters (no timing is judged here): the
# replay with runahead queues a whole replay on the stream (max_runahead 64,
# the graph-steps) with one notification a replay; without runahead, and on
# the eager path, every op waits for its producer's device side (runahead
# 1, 64 notifications a replay).
# Usage: bench_async.sh BENCH WORKDIR
set -u
bench=$1 work=$2
mkdir -p "$work" && cd "$work" || exit 1
"$bench" --benchmark_filter='^async/' --benchmark_min_time=0.01 --benchmark_format=json >b.json 2>b.err \
  || { cat b.err; echo "FAIL: the bench exited $?"; exit 1; }
python3 - b.json <<'PY'
import json, sys
rows = {b["name"].removesuffix("/real_time"): b for b in json.load(open(sys.argv[1]))["benchmarks"]}
bad = []
def need(cond, what):
    if not cond: bad.append(what)
for k in (50, 3000):
    for mode in ("eager", "replay-none", "replay-all"):
        name = f"async/chain/{mode}/K:{k}"
        b = rows.get(name)
        if b is None or b.get("error_occurred"):
            need(False, f"{name}: {'missing' if b is None else b.get('error_message')}")
            continue
        runahead, notes = b["max_runahead"], b["notifications_per_replay"]
        want = (64, 1) if mode == "replay-all" else (1, 64)
        need((runahead, round(notes)) == want, f"{name}: runahead {runahead:.0f}, {notes:.2f} notifications a replay, expected {want}")
        need(b["d_us"] > 0 and b["h_us"] > 0 and b["bound_ns_per_task"] > 0, f"{name}: a device figure is 0")
        print(f"ok {name}: {b['ns_per_task']:.0f} ns a task, bound {b['bound_ns_per_task']:.0f}, runahead {runahead:.0f}, {notes:.0f} notifications a replay")
for line in bad:
    print("FAIL:", line)
sys.exit(1 if bad else 0)
PY
