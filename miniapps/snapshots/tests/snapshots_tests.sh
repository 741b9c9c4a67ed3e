#!/usr/bin/env bash
# snapshots_tests.sh CASE WORKDIR: the hand-written end-to-end tests of
# mapp-snapshots (one case per ctest test). Needs MAPP_BIN_DIR (mapp_add_test
# sets it) and mpirun on PATH. Every case exits non-zero on failure, 77 to
# skip.
set -u
case_name=$1 work=$2
bin=$MAPP_BIN_DIR/mapp-snapshots
inspect=$MAPP_BIN_DIR/mapp-snapshots-inspect
rm -rf "$work" && mkdir -p "$work/disk" "$work/tmp" && cd "$work" || exit 1
export TMPDIR=$work/tmp OMP_WAIT_POLICY=passive
fail() { echo "FAIL: $*"; exit 1; }
run() { # RANKS ARGS...: mapp-snapshots quietly on RANKS ranks (stdin closed: mpirun would eat a loop's list)
  local n=$1; shift
  if [ "$n" -eq 1 ]; then "$bin" --quiet "$@" </dev/null; else mpirun -q -np "$n" --oversubscribe "$bin" --quiet "$@" </dev/null; fi
}
same() { # A B: gradient, rec and u_final bit for bit equal
  for d in gradient rec u_final; do
    h5diff -q "$1" "$2" "$d" "$d" >/dev/null || { echo "dataset $d differs: $1 $2"; return 1; }
  done
}
record() { # FILE EXPR: a value of app_data from the last record, e.g. "['snapshots_per_layer']['disk']"
  python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print(eval('r[\"app_data\"]'+sys.argv[2]))" "$1" "$2"
}
verdict() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])['verification']['status'])" "$1"; }
expect_exit() { # CODE REGEX CMD...: the project's checker (exit code, one stderr line matching REGEX)
  local code=$1 regex=$2; shift 2
  "$MAPP_SOURCE_DIR/miniapps/common/tests/expect_exit.sh" "$code" "$regex" -- "$@" || fail "expected exit $code: $*"
}
tiny="--size tiny"

case $case_name in
layers)
  # Every layer setting, thread count, prefetch depth and zstd: the same
  # bits as --layers none, on 1 and 2 ranks. zfp must differ (the
  # comparison can fail).
  for n in 1 2; do
    run $n $tiny --variant memory --output ref$n.h5 || fail "reference run"
    i=0
    while read -r args; do
      i=$((i + 1))
      run $n $tiny --variant stream $args --output s$n-$i.h5 --result s$n-$i.json || fail "run: $args"
      same ref$n.h5 s$n-$i.h5 || fail "n=$n $args: not bit for bit equal to --layers none"
      echo "ok n=$n: $args (disk $(record s$n-$i.json "['snapshots_per_layer']['disk']"), host $(record s$n-$i.json "['snapshots_per_layer']['host']"))"
    done <<'LIST'
--layers none
--layers host
--layers disk
--layers disk-host --host-budget 8MiB
--layers disk --io-threads 3 --prefetch-depth 1
--layers disk-host --host-budget 5MiB --prefetch-depth 6 --disk-io buffered
--layers disk --compression zstd --zstd-level 3
--layers disk-host --host-budget 5MiB --compression zstd --io-threads 2
--layers disk-host --host-budget 5MiB --disk-io uring --io-threads 2
LIST
    # 5 MiB of host per rank leaves some of each rank's snapshots for the
    # disk on 1 and 2 ranks, zstd's too (8 MiB does on 1 rank only: half
    # the grid each; 6 MiB no longer does for zstd on 2 ranks, each rank
    # holding its own receivers' data only).
    for k in 6 8 9; do
      [ "$(record s$n-$k.json "['snapshots_per_layer']['disk']")" != "0.0" ] || fail "n=$n case $k: 5MiB host budget sent nothing to disk"
    done
    case "$(record s$n-9.json "['disk_io']")" in uring|direct) ;; *) fail "--disk-io uring: the record's disk_io is not uring or direct (refused)";; esac
    run $n $tiny --variant stream --compression zfp --zfp-tolerance 1e-4 --output zfp$n.h5 --result zfp$n.json || fail "zfp run"
    if h5diff -q ref$n.h5 zfp$n.h5 gradient gradient >/dev/null; then fail "zfp (lossy) agreed bit for bit: the comparison cannot fail"; fi
    # The run measured its own error against the exact gradient, and its
    # check (within the bound zfp's tolerance states) passed: exit 0 above.
    python3 -c "import sys; e=float(sys.argv[1]); sys.exit(0 if 0 < e < 1e-3 else 1)" \
      "$(record zfp$n.json "['gradient_error_rel']")" || fail "zfp: the record's gradient_error_rel is not in (0, 1e-3)"
    echo "ok n=$n: zfp differs, as a lossy store must, by $(record zfp$n.json "['gradient_error_rel']") of max |g|"
  done ;;
ranks)
  # 1, 2 and 4 ranks give the same bits (streamed to disk, and checkpointed).
  for v in "--variant stream --layers disk-host --host-budget 7MiB" "--variant revolve --checkpoints 3"; do
    for n in 1 2 4; do run $n $tiny $v --output r$n.h5 || fail "$v on $n ranks"; done
    same r1.h5 r2.h5 && same r1.h5 r4.h5 || fail "$v: ranks disagree"
    echo "ok: $v: 1, 2, 4 ranks bit for bit"
  done
  # 3-D, space order 8: streamed with zstd on 2 ranks against memory on 1.
  g3="--dims 3 --nx 30 --nz 30 --steps 80 --space-order 8 --nbl 6"
  run 1 $g3 --variant memory --output m3.h5 || fail "3-D memory"
  run 2 $g3 --layers disk-host --host-budget 12MiB --compression zstd --output s3.h5 || fail "3-D stream"
  same m3.h5 s3.h5 || fail "3-D: 2 ranks streamed differ from 1 rank in memory"
  echo "ok: 3-D space order 8, 2 ranks streamed (zstd, disk-host) bit for bit"
  # The comparison can fail: every 2nd snapshot changes the gradient.
  run 2 $tiny --save-every 2 --output r2k.h5 || fail "--save-every 2"
  if same r1.h5 r2k.h5 >/dev/null; then fail "--save-every 2 agreed bit for bit: the comparison cannot fail"; fi
  echo "ok: a changed gradient (--save-every 2) is seen" ;;
forced_disk)
  # A host budget far below the snapshots: most go to disk; the gradient is
  # still the in-memory one, and the peak RSS (getrusage) stays within the
  # host budget + 5 % (the record's rss-within-host-budget check).
  grid="--nx 400 --nz 100 --steps 300"
  run 1 $grid --variant memory --output ref.h5 || fail "reference"
  run 1 $grid --layers disk-host --host-budget 40MiB --output d.h5 --result d.json || fail "forced-to-disk run"
  same ref.h5 d.h5 || fail "forced-to-disk gradient differs"
  # The same on the omp backend with 2 threads (this grid is above the
  # size below which loops stay on one thread).
  OMP_NUM_THREADS=2 run 1 $grid --backend omp --threads 2 --layers disk-host --host-budget 40MiB --output o.h5 || fail "omp run"
  same ref.h5 o.h5 || fail "omp (2 threads) gradient differs"
  disk=$(record d.json "['snapshots_per_layer']['disk']") host=$(record d.json "['snapshots_per_layer']['host']")
  python3 -c "import sys; sys.exit(0 if $disk > 2 * $host else 1)" || fail "most snapshots should be on disk: disk $disk, host $host"
  [ "$(verdict d.json)" = pass ] || fail "verification (rss-within-host-budget) failed"
  # An AddressSanitizer build (presets debug, sanitize) leaves the RSS check
  # out (snap_app.c: the shadow memory and quarantine are not the app's), so
  # there the check cannot be shown to fail.
  if readelf -d "$bin" | grep -q 'NEEDED.*libasan'; then
    echo "ok: disk $disk, host $host snapshots (AddressSanitizer build: no RSS check to test)"
    exit 0
  fi
  # The check can fail: memory keeps all 96 MB of snapshots whatever the
  # budget it is checked against.
  run 1 $grid --variant memory --host-budget 40MiB --result m.json
  rc=$?
  [ $rc -eq 1 ] && [ "$(verdict m.json)" = fail ] || fail "memory under a 40 MiB budget: exit $rc, RSS check not failed"
  echo "ok: memory variant under the same budget fails the RSS check (exit 1)"
  echo "ok: disk $disk, host $host snapshots; peak RSS $(record d.json "['peak_rss_bytes']") within $(record d.json "['rss_before_bytes']") + 1.05 x $(record d.json "['host_budget_bytes']")"
  echo "   stalls: forward $(record d.json "['stall_forward_s']") s, adjoint $(record d.json "['stall_adjoint_s']") s" ;;
recompute)
  # Budgets too small without a disk layer: refused (exit 2) without
  # --recompute; with it, checkpointing gives the same bits.
  run 1 $tiny --variant memory --output ref.h5 || fail "reference"
  expect_exit 2 "snapshots need [0-9]+ bytes per rank but the budgets give [0-9]+" \
    "$bin" $tiny --layers host --host-budget 3MiB
  run 1 $tiny --layers host --host-budget 3MiB --recompute --output rc.h5 --result rc.json || fail "--recompute run"
  same ref.h5 rc.h5 || fail "--recompute gradient differs"
  factor=$(record rc.json "['recomputation_factor']")
  python3 -c "import sys; sys.exit(0 if $factor > 1 else 1)" || fail "recomputation factor $factor"
  echo "ok: --recompute with $(record rc.json "['checkpoints']") checkpoints, recomputation factor $factor" ;;
inspect)
  # The accessor: 0 for a complete file, 1 for truncated or corrupted data,
  # 2 for something that is not a snapshot file; --step reads one back.
  run 1 $tiny --layers disk --keep --disk-dir "$work/disk" --output ref.h5 || fail "run with --keep"
  f=$(ls "$work"/disk/*.snap | head -1)
  [ -n "$f" ] || fail "--keep left no file"
  "$inspect" "$f" >out.txt || { cat out.txt; fail "complete file rejected"; }
  grep -q "all 300 snapshots on disk match" out.txt || fail "not every snapshot verified"
  "$inspect" "$f" --step 300 --output snap300.h5 >out.txt || fail "--step 300"
  # The last snapshot is the last wavefield: it must match u_final.
  h5diff -q snap300.h5 ref.h5 snapshot u_final >/dev/null || fail "snapshot 300 differs from u_final"
  size=$(stat -c %s "$f")
  cp "$f" trunc.snap && truncate -s $((size - 9000)) trunc.snap
  expect_exit 1 "beyond the end of the file|truncated" "$inspect" trunc.snap
  cp "$f" corrupt.snap && printf 'X' | dd of=corrupt.snap bs=1 seek=200000 conv=notrunc 2>/dev/null
  expect_exit 1 "fails its checksum" "$inspect" corrupt.snap
  head -c 8192 /dev/urandom >garbage.snap
  expect_exit 2 "not a snapshot file" "$inspect" garbage.snap
  expect_exit 2 "cannot open" "$inspect" "$work/none.snap"
  expect_exit 2 "--step 301" "$inspect" "$f" --step 301 ;;
killed)
  # kill -9 mid-forward: with --keep the file left behind is incomplete
  # and the accessor refuses it; without --keep nothing is left at all.
  for keep in --keep ""; do
    rm -rf "$work/disk" && mkdir -p "$work/disk"
    "$bin" --quiet --nx 300 --nz 200 --steps 3000 --layers disk --disk-io buffered $keep --disk-dir "$work/disk" &
    pid=$!
    for _ in $(seq 1 200); do # until the forward has written snapshots
      f=$(ls "$work"/disk/*.snap 2>/dev/null | head -1)
      [ -n "$f" ] && [ "$(stat -c %s "$f" 2>/dev/null || echo 0)" -gt 2000000 ] && break
      [ -z "$keep" ] && [ -n "$(ls /proc/$pid/fd 2>/dev/null)" ] && sleep 0.5 && break
      sleep 0.05
    done
    kill -9 $pid; wait $pid 2>/dev/null
    left=$(ls "$work"/disk/ | grep -c '\.snap$')
    if [ -n "$keep" ]; then
      [ "$left" -ge 1 ] || fail "--keep run left no file to check"
      for f in "$work"/disk/*.snap; do
        "$inspect" "$f" >out.txt 2>err.txt && fail "the accessor accepted a killed run's file $f"
        echo "ok: killed run's file refused: $(cat err.txt)"
      done
    else
      [ "$left" -eq 0 ] || fail "a killed run without --keep left $left files"
      echo "ok: killed run without --keep left no file"
    fi
  done ;;
disk_errors)
  # A disk folder that cannot be used: exit 3 naming it. A full disk at run
  # time (a 1 MiB tmpfs, where this machine lets us mount one): exit 3
  # naming the file and the bytes written.
  expect_exit 3 "--disk-dir $work/missing cannot be used" "$bin" $tiny --layers disk --disk-dir "$work/missing"
  touch plainfile
  expect_exit 3 "cannot create $work/plainfile/.*\\.snap" "$bin" $tiny --layers disk --disk-dir "$work/plainfile" --disk-budget 1GiB
  mkdir -p full
  if ! mount -t tmpfs -o size=1m tmpfs full 2>/dev/null; then echo "skip: cannot mount a tmpfs here"; exit 77; fi
  trap 'umount "$work/full"' EXIT
  expect_exit 3 "writing $work/full/.*\\.snap failed after [0-9]+ bytes written: No space left" \
    "$bin" $tiny --layers disk --disk-dir "$work/full" --disk-budget 1GiB --disk-io buffered
  if ls full | grep -q .; then fail "the full disk run left a file"; fi
  echo "ok: nothing left on the full disk"
  # The same through io_uring (the plain calls where the kernel refuses it:
  # the message is the same either way).
  expect_exit 3 "writing $work/full/.*\\.snap failed after [0-9]+ bytes written: No space left" \
    "$bin" $tiny --layers disk --disk-dir "$work/full" --disk-budget 1GiB --disk-io uring
  if ls full | grep -q .; then fail "the full disk run (io_uring) left a file"; fi
  echo "ok: io_uring on the full disk: exit 3, nothing left"
  # Two ranks on the same full disk: whichever fails, no rank hangs in a
  # collective the failed one skipped (60 s limit).
  rm -f err.txt
  timeout 60 mpirun -q -np 2 --oversubscribe "$bin" $tiny --layers disk --disk-dir "$work/full" --disk-budget 1GiB \
    --disk-io buffered >out.txt 2>err.txt
  rc=$?
  [ $rc -eq 3 ] || { cat err.txt; fail "2 ranks on a full disk: exit $rc, expected 3 (124: hung)"; }
  grep -q "No space left" err.txt || { cat err.txt; fail "2 ranks on a full disk: no message"; }
  echo "ok: 2 ranks on a full disk: exit 3, no hang" ;;
estimate)
  "$bin" $tiny --estimate --layers disk-host --host-budget 64MiB --result e.json >out.txt || fail "--estimate"
  grep -q "snapshots 11520000 (upper bound: 300 x 38400)" out.txt || { cat out.txt; fail "estimate line"; }
  [ "$(record e.json "['estimate_only']")" = True ] || fail "record does not say estimate_only"
  if ls "$work"/tmp "$work"/disk | grep -q '\.snap$'; then fail "--estimate created files"; fi
  echo "ok: $(cat out.txt | head -1)" ;;
cuda_layers)
  # The device tier (CUDA only; skipped without a GPU): device, host-device
  # and disk-host-device under a device budget that forces a split give the
  # gradient of --layers none bit for bit (same backend, same kernels), the
  # record shows the snapshots and bytes on the device, the latest stay on
  # the device and the earliest reach the disk.
  "$bin" --backend cuda $tiny --estimate --result probe.json >probe.txt 2>probe.err
  rc=$?
  if [ $rc -eq 2 ] && grep -q "no CUDA device" probe.err; then echo "skip: no CUDA device"; exit 77; fi
  [ $rc -eq 0 ] || { cat probe.err; fail "--backend cuda --estimate: exit $rc"; }
  cuda="$tiny --backend cuda"
  snap=38400 nsnap=300 # the tiny preset's snapshot (raw bytes, a whole number of 256-byte slots) and count
  fixed=$(record probe.json "['estimate']['device_bytes']" | cut -d. -f1)
  [ "$fixed" -gt 0 ] || fail "the estimate has no device bytes: $fixed"
  dev() { echo $((fixed + $1 * snap)); } # a device budget holding N snapshots besides the fields
  count() { record "$1" "['snapshots_per_layer']['$2']" | cut -d. -f1; }
  run 1 $cuda --variant memory --output ref.h5 || fail "cuda reference (--layers none)"
  i=0
  while read -r want_dev want_host want_disk args; do
    i=$((i + 1))
    eval "args=\"$args\"" # $(dev N) inside the list
    rm -rf "$work/disk" && mkdir -p "$work/disk"
    run 1 $cuda --variant stream $args --keep --disk-dir "$work/disk" --output c$i.h5 --result c$i.json || fail "run: $args"
    same ref.h5 c$i.h5 || fail "$args: not bit for bit equal to --layers none"
    d=$(count c$i.json device) h=$(count c$i.json host) k=$(count c$i.json disk)
    [ $((d + h + k)) -eq $nsnap ] || fail "$args: $d + $h + $k snapshots placed, not $nsnap"
    [ "$d" -eq "$want_dev" ] || fail "$args: $d snapshots on the device, expected $want_dev"
    [ "$want_host" = any ] || [ "$h" -eq "$want_host" ] || fail "$args: $h on the host, expected $want_host"
    [ "$want_disk" = any ] || [ "$k" -eq "$want_disk" ] || fail "$args: $k on disk, expected $want_disk"
    peak=$(record c$i.json "['peak_bytes_per_layer']['device']" | cut -d. -f1)
    [ "$peak" -eq $((d * snap)) ] || fail "$args: device peak bytes $peak, expected $((d * snap))"
    if [ "$k" -gt 0 ]; then # the earliest snapshots are the disk's: steps 1..k, the latest is not there
      f=$(ls "$work"/disk/*.snap | head -1)
      "$inspect" "$f" --step $nsnap >out.txt 2>err.txt && fail "$args: the latest snapshot is on disk"
      grep -q "stayed in a faster layer); the file holds steps 1\.\.$k\$" err.txt || { cat err.txt; fail "$args: disk holds not steps 1..$k"; }
    fi
    echo "ok: $args: device $d, host $h, disk $k, device bytes $peak"
  done <<'LIST'
300 0 0 --layers device --device-budget $(dev 300)
300 0 0 --layers host-device --device-budget $(dev 400)
100 200 0 --layers host-device --device-budget $(dev 100)
100 any any --layers disk-host-device --device-budget $(dev 100) --host-budget 6MiB
1 any any --layers disk-host-device --device-budget $(dev 1) --host-budget 6MiB --io-threads 3 --prefetch-depth 4
0 any any --layers disk-host-device --device-budget $(dev 0) --host-budget 6MiB
150 any any --layers disk-host-device --device-budget $(dev 150) --host-budget 5MiB --compression zstd --io-threads 2
LIST
  [ "$(count c4.json host)" -gt 0 ] && [ "$(count c4.json disk)" -gt 0 ] || fail "disk-host-device did not use all three layers"
  # Two ranks share the device; each keeps its own latest snapshots on it.
  run 2 $cuda --variant memory --output ref2.h5 || fail "cuda reference on 2 ranks"
  run 2 $cuda --layers disk-host-device --device-budget "$(dev 50)" --host-budget 5MiB --output c2r.h5 --result c2r.json || fail "2 ranks"
  same ref2.h5 c2r.h5 || fail "2 ranks, disk-host-device: not bit for bit"
  [ "$(count c2r.json device)" -gt 0 ] || fail "2 ranks: nothing on the device"
  # The device budget from MAPP_DEVICE_MEM_PERC (cudaMemGetInfo's free memory).
  MAPP_DEVICE_MEM_PERC=0.5 run 1 $cuda --layers host-device --output p.h5 --result p.json || fail "MAPP_DEVICE_MEM_PERC=0.5"
  same ref.h5 p.h5 || fail "MAPP_DEVICE_MEM_PERC=0.5: not bit for bit"
  python3 -c "import sys; sys.exit(0 if $(record p.json "['device_budget_bytes']") > 0 else 1)" || fail "no device budget from MAPP_DEVICE_MEM_PERC"
  # Too small: a device-only budget one snapshot short is refused, and
  # recomputed with --recompute (same bits); a budget below the fields is refused.
  expect_exit 2 "snapshots need [0-9]+ bytes per rank but the budgets give [0-9]+" \
    "$bin" $cuda --layers device --device-budget "$(dev 299)"
  run 1 $cuda --layers device --device-budget "$(dev 299)" --recompute --output rc.h5 || fail "--recompute"
  same ref.h5 rc.h5 || fail "--layers device --recompute: not bit for bit"
  expect_exit 2 "device budget of [0-9]+ bytes cannot hold even the wavefields" \
    "$bin" $cuda --layers host-device --device-budget $((fixed - 1))
  # --estimate shows the device tier's share.
  "$bin" $cuda --layers disk-host-device --device-budget "$(dev 100)" --host-budget 6MiB --estimate >est.txt || fail "--estimate"
  grep -q "device $fixed, snapshots 11520000" est.txt && grep -q "uncompressed placement: device 100 (the latest)" est.txt ||
    { cat est.txt; fail "estimate line without the device tier"; }
  # The comparison can fail: zfp on the host part changes the gradient.
  run 1 $cuda --layers host-device --device-budget "$(dev 100)" --compression zfp --zfp-tolerance 1e-4 --output z.h5 || fail "zfp"
  if h5diff -q ref.h5 z.h5 gradient gradient >/dev/null; then fail "zfp agreed bit for bit: the comparison cannot fail"; fi
  echo "ok: zfp differs, as a lossy store must" ;;
env_perc)
  expect_exit 2 "MAPP_HOST_MEM_PERC=1.5 is outside \\(0, 1\\]" env MAPP_HOST_MEM_PERC=1.5 "$bin" $tiny --layers host
  MAPP_DISK_MEM_PERC=0.5 run 1 $tiny --layers disk --result p.json || fail "MAPP_DISK_MEM_PERC=0.5"
  echo "ok: disk budget $(record p.json "['budget_bytes_per_layer']['disk']") at 0.5" ;;
min_time_n1 | min_time_n2)
  # --min-time runs the gradient again from setup's state (the reset hook
  # empties the store: writers and prefetchers stopped, every place
  # forgotten, the disk file rewritten from its header on) until the
  # iterations last 0.05 s. Every variant on every CPU backend, and the
  # stream's disk layer (zstd too, several writers), gives the answer of
  # a run without it, bit for bit, and the record says the phase ran more
  # than once. The reference is one run without --min-time: the variants
  # agree bit for bit (snapshots.agree.*). 30 steps: tiny's 300 last about
  # as long as --min-time alone, and the repetition is what is tested.
  n=${case_name#min_time_n}
  short="$tiny --steps 30"
  # repeated NAME ARGS... (min_time_repeat.sh): ARGS with --min-time, the answer
  # against ref.h5, the timed phase repeated.
  run_case() { run $n "$@"; }
  . "$(dirname "${BASH_SOURCE[0]}")/../../common/tests/min_time_repeat.sh"
  run $n $short --variant memory --output ref.h5 || fail "reference run"
  i=0
  while read -r args; do
    i=$((i + 1))
    repeated m$i $short $args
    echo "ok n=$n $args: $ran iterations, bit for bit the run's without --min-time"
  done <<'LIST'
--variant memory --backend serial
--variant memory --backend omp
--variant stream --backend serial
--variant stream --backend omp
--variant revolve --backend serial
--variant revolve --backend omp
--variant stream --layers disk --disk-dir disk
--variant stream --layers disk --compression zstd --io-threads 2 --disk-dir disk
LIST
  ;;
budget_ranks)
  # A host budget holds on every rank: each rank's peak RSS within what it
  # held before setup plus its budget (the app's own rss-within-host-budget
  # check), rank 0's gather of the objective's rows included (it failed on
  # rank 0 of 2 ranks: 70.5 MB against 68.6). The 1-rank run steps one at
  # a time there (budget_single).
  for n in 2 4; do
    run $n --size small --scaling strong --layers disk-host --host-budget 40MiB --disk-dir disk --result b$n.json \
      || fail "n=$n: exit $? ($(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print([c for c in r['verification']['checks'] if not c['passed']])" b$n.json 2>/dev/null))"
    [ "$(verdict b$n.json)" = pass ] || fail "n=$n: verdict $(verdict b$n.json)"
    python3 - b$n.json <<'PY' || fail "n=$n: no rss check passed"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
c = [c for c in r["verification"]["checks"] if c["name"] == "rss-within-host-budget"]
assert c and c[0]["passed"], c
print("rss %.1f MB within %.1f MB" % (c[0]["value"] / 1e6, c[0]["bound"] / 1e6))
PY
    echo "ok n=$n: disk $(record b$n.json "['snapshots_per_layer']['disk']") host $(record b$n.json "['snapshots_per_layer']['host']") snapshots"
  done ;;
budget_single)
  # small on 1 rank under 40 MiB: the wavefields and the buffers of two
  # steps at a time (43.1 MB) do not fit, those of one at a time (41.2 MB)
  # do, so it steps one at a time, says so in its record, keeps its peak
  # RSS within the budget (its rss-within-host-budget check) and gives the
  # bits of a paired run under a budget that holds the pairs. 39 MiB holds
  # neither: refused (exit 2), naming the need and the budget.
  small="--size small --layers disk-host --disk-dir disk"
  run 1 $small --host-budget 64MiB --output p.h5 --result p.json || fail "paired run under 64 MiB"
  [ "$(record p.json "['steps_per_pass']")" = 2 ] || fail "64 MiB: $(record p.json "['steps_per_pass']") steps a pass, not 2"
  [ "$(record p.json "['budget_single_steps']")" = False ] || fail "64 MiB: the record says the budget chose single steps"
  run 1 $small --host-budget 40MiB --output s.h5 --result s.json \
    || fail "40 MiB: exit $? ($(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print([c for c in r['verification']['checks'] if not c['passed']])" s.json 2>/dev/null))"
  [ "$(verdict s.json)" = pass ] || fail "40 MiB: verdict $(verdict s.json)"
  for k in steps_per_pass adjoint_steps_per_pass; do
    [ "$(record s.json "['$k']")" = 1 ] || fail "40 MiB: $k is $(record s.json "['$k']"), not 1"
  done
  [ "$(record s.json "['budget_single_steps']")" = True ] || fail "40 MiB: the record does not say the budget chose single steps"
  record s.json "['budget_single_steps_reason']" | grep -Eq "^the host budget of 41943040 bytes holds .* one step at a time \([0-9]+ bytes\), not of two \([0-9]+ bytes\)$" \
    || fail "40 MiB: reason '$(record s.json "['budget_single_steps_reason']")'"
  same p.h5 s.h5 || fail "40 MiB: one step at a time differs from two at a time"
  "$bin" $small --host-budget 40MiB --estimate </dev/null | grep -q "^snapshots: one step at a time: the host budget of 41943040 bytes" \
    || fail "40 MiB without --quiet: no line saying one step at a time"
  [ -z "$("$bin" $small --host-budget 40MiB --estimate --quiet </dev/null)" ] || fail "40 MiB --quiet: printed something"
  expect_exit 2 "host budget of 40894464 bytes cannot hold even the wavefields and buffers \([0-9]+ bytes, one step at a time\)" \
    "$bin" $small --host-budget 39MiB
  echo "ok: $(record s.json "['budget_single_steps_reason']"); peak RSS $(record s.json "['peak_rss_bytes']") - $(record s.json "['rss_before_bytes']") before; the bits of two at a time" ;;
kernels)
  # The AVX-512 row kernels (z neighbours shifted in registers) against
  # the portable ones (MAPP_SNAP_PORTABLE_ROWS=1): the same bits, forward
  # and adjoint, 2-D and 3-D, space orders 2, 4 and 8, damped and calm
  # points, rows that are not whole vectors, 1 and 2 threads. Skipped
  # where the CPU has no AVX-512 (both would be the portable kernels).
  run 1 $tiny --variant memory --result probe.json || fail "probe run"
  [ "$(record probe.json "['kernels']")" = avx512 ] || { echo "no AVX-512 kernels on this CPU: skipped"; exit 77; }
  i=0
  while read -r args; do
    i=$((i + 1))
    run 1 --variant memory $args --output w$i.h5 --result w$i.json || fail "run: $args"
    MAPP_SNAP_PORTABLE_ROWS=1 run 1 --variant memory $args --output p$i.h5 --result p$i.json || fail "portable run: $args"
    [ "$(record p$i.json "['kernels']")" = portable ] || fail "MAPP_SNAP_PORTABLE_ROWS=1 still ran $(record p$i.json "['kernels']")"
    same w$i.h5 p$i.h5 || fail "$args: the AVX-512 kernels' answer differs from the portable kernels'"
    echo "ok: $args"
  done <<'LIST'
--size tiny --space-order 2
--size tiny --space-order 4
--size tiny --space-order 8
--dims 2 --nx 61 --nz 45 --nbl 7 --space-order 8 --steps 150 --backend omp --threads 2
--dims 3 --nx 36 --ny 33 --nz 44 --space-order 8 --steps 70
--dims 3 --nx 34 --ny 31 --nz 37 --nbl 7 --space-order 4 --steps 70 --backend omp --threads 2
--dims 3 --nx 32 --ny 30 --nz 40 --space-order 2 --steps 70
LIST
  ;;
paired)
  # Steps two at a time (the memory variant on one rank: one pass over
  # memory for steps k and k + 1, forward and adjoint, a wavefront along x)
  # against one at a time (MAPP_SNAP_SINGLE_STEPS=1), each as its record
  # says: the same bits, the gradient too (nonzero where the second
  # column says so: the reflection has come back by the last step). Grids
  # above the size that runs threads, 2 and 3 threads (slab edges that wait
  # for the barrier; slabs narrower than the stencil's reach), odd row and
  # step counts (the last step and the last row alone), every space order;
  # in 3-D, y blocks of the default size and of 1 and 5 rows
  # (MAPP_SNAP_PAIR_ROWS: blocks narrower than the stencil's reach); a
  # streamed run too (two snapshots at once through ring and disk).
  while read -r rows imaged args; do
    [ "$rows" = - ] && rows=
    MAPP_SNAP_PAIR_ROWS=$rows run 1 --variant memory $args --output m.h5 --result m.json || fail "paired run: $args"
    MAPP_SNAP_SINGLE_STEPS=1 run 1 --variant memory $args --output s.h5 --result s.json || fail "single-step run: $args"
    [ "$(record m.json "['steps_per_pass']")" = 2 ] || fail "$args: the record says $(record m.json "['steps_per_pass']") steps a pass, not 2"
    [ "$(record s.json "['steps_per_pass']")" = 1 ] || fail "MAPP_SNAP_SINGLE_STEPS=1 $args: $(record s.json "['steps_per_pass']") steps a pass"
    [ "$(record m.json "['adjoint_steps_per_pass']")" = 2 ] || fail "$args: the record says the adjoint ran $(record m.json "['adjoint_steps_per_pass']") steps a pass, not 2"
    [ "$(record s.json "['adjoint_steps_per_pass']")" = 1 ] || fail "MAPP_SNAP_SINGLE_STEPS=1 $args: the adjoint ran $(record s.json "['adjoint_steps_per_pass']") steps a pass"
    [ "$imaged" != imaged ] || h5dump -y -w 0 -d /gradient s.h5 | sed -n '/DATA {/,/}/p' | grep -qE '[1-9]' || fail "$args: the gradient is zero: the adjoint's imaging goes unchecked"
    same m.h5 s.h5 || fail "$args (y blocks of ${rows:-default} rows): steps two at a time differ from steps one at a time"
    echo "ok: $args (y blocks: ${rows:-default})"
  done <<'LIST'
- imaged --dims 2 --nx 203 --nz 131 --nbl 7 --space-order 8 --steps 301 --backend omp --threads 2
- imaged --dims 2 --nx 160 --nz 120 --space-order 4 --steps 300 --backend omp --threads 3
- imaged --dims 2 --nx 150 --nz 130 --space-order 2 --steps 301 --backend omp --threads 2
- zero --dims 2 --nx 30 --nz 600 --space-order 8 --steps 61 --backend omp --threads 2
- imaged --size tiny --space-order 8 --steps 41
- imaged --dims 3 --nx 41 --ny 33 --nz 29 --space-order 8 --steps 31 --backend omp --threads 2
1 imaged --dims 3 --nx 41 --ny 33 --nz 29 --space-order 8 --steps 31 --backend omp --threads 2
5 imaged --dims 3 --nx 41 --ny 37 --nz 29 --space-order 4 --steps 30 --backend omp --threads 3
- imaged --dims 3 --nx 45 --ny 31 --nz 30 --space-order 2 --steps 33
- imaged --size tiny --space-order 8 --steps 41 --variant stream --layers disk-host --host-budget 2MiB --io-threads 2
LIST
  ;;
*) fail "unknown case $case_name" ;;
esac
