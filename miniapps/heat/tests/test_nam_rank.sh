#!/usr/bin/env bash
# test_nam_rank.sh VARIANT RANKS EXPECT_EXIT: RANKS compute ranks and one
# memory rank (--nam-mode rank) write a region identical, byte for byte, to
# the one --nam-mode file writes from the same run, whose frames equal serial
# runs stopped at their timesteps; with --nam-checksum crc32 the memory rank
# checks what it received against the compute ranks' checksums. Then the
# memory rank's failures: stopped (SIGSTOP), the run ends with one line and
# exit 3 once it does not answer; killed (SIGKILL), Open MPI's mpirun ends
# the job (exit 137: a launcher's verdict, not the app's); either way the
# region claims no snapshot and mapp-heat-animate refuses it.
. "$(dirname "$0")/heat_test_lib.sh"
variant=$1 ranks=$2 expect=$3
args=(--steps 12 --block-rows 7 --block-cols 9 --snapshot-every 4)
run "$ranks" 2 "$variant" "${args[@]}" --nam "$WORK/file.nam" || { echo "FAIL: file mode"; exit 1; }
for checksum in none crc32; do
  run $((ranks + 1)) 2 "$variant" "${args[@]}" --nam-mode rank --nam-checksum $checksum --nam "$WORK/rank.nam" \
    --result "$WORK/rank.json" || { echo "FAIL: rank mode, --nam-checksum $checksum"; exit 1; }
  cmp "$WORK/file.nam" "$WORK/rank.nam" && echo "ok: rank mode ($checksum) wrote the file mode's region byte for byte" ||
    { echo "FAIL: rank mode ($checksum) and file mode regions differ"; failures=$((failures + 1)); }
  python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).readlines()[-1]); \
sys.exit(not (r['ranks'] == int(sys.argv[2]) and r['app_data']['nam_mode'] == 'rank'))" "$WORK/rank.json" "$ranks" &&
    echo "ok: the record counts $ranks compute ranks, nam_mode rank" ||
    { echo "FAIL: the record's ranks or nam_mode"; failures=$((failures + 1)); }
done
# A bit flipped on the way (planted on the memory rank): with the compute
# ranks' CRC-32 the memory rank refuses to publish, one line, exit 3.
MAPP_HEAT_NAM_FLIP=1 "$expect" 3 "reached the memory rank with CRC-32 [0-9a-f]+, it was put with" -- \
  "$MPIEXEC" -q -np $((ranks + 1)) --oversubscribe -x MAPP_HEAT_NAM_FLIP "$HEAT" --variant "$variant" \
  --backend "$([ "$variant" = mpi ] && echo serial || echo omp)" "${args[@]}" --nam-mode rank --nam-checksum crc32 \
  --nam "$WORK/flipped.nam" --quiet || failures=$((failures + 1))
"$ANIMATE" "$WORK/rank.nam" --hdf5 "$WORK/frames.h5" || { echo "FAIL: mapp-heat-animate"; exit 1; }
for step in 4 8 12; do
  same "rank-mode frame of timestep $step" "$(reference $step)" /temperature "$WORK/frames.h5" "/step_$(printf %06d $step)"
done

# The issue's command: --gif without --nam puts the region beside the GIF.
(cd "$WORK" && "$MPIEXEC" -np 3 --oversubscribe "$HEAT" --nam-mode rank --snapshot-every 5 --gif g.gif --quiet &&
  "$MPIEXEC" -np 2 --oversubscribe "$HEAT" --snapshot-every 5 --nam f.nam --quiet) ||
  { echo "FAIL: --nam-mode rank --gif g.gif"; exit 1; }
[ -s "$WORK/g.gif" ] && cmp "$WORK/g.nam" "$WORK/f.nam" && "$ANIMATE" "$WORK/g.nam" >/dev/null &&
  echo "ok: --nam-mode rank --gif g.gif wrote g.gif and g.nam, the file mode's region byte for byte" ||
  { echo "FAIL: --nam-mode rank --gif g.gif: no GIF, or g.nam differs from the file mode's"; failures=$((failures + 1)); }

# The memory rank (the last) of a longer run, once it has created the
# region (it has the layout: the compute ranks are making the window).
memory_rank_pid() {
  local last=$1 p
  for _ in $(seq 200); do
    if [ -s "$WORK/dead.nam" ]; then
      for p in $(pgrep -f "$WORK/dead.nam"); do
        tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$last" && { echo "$p"; return; }
      done
    fi
    sleep 0.05
  done
}
rm -f "$WORK/dead.nam"
long=(--variant "$variant" --backend "$([ "$variant" = mpi ] && echo serial || echo omp)" --size medium --steps 60
      --snapshot-every 5 --nam "$WORK/dead.nam" --nam-mode rank --quiet --watchdog-s 3)
err="$WORK/stopped.err"
timeout 120 "$MPIEXEC" -q -np 3 --oversubscribe "$HEAT" "${long[@]}" 2>"$err" &
launcher=$!
pid=$(memory_rank_pid 2)
[ -n "$pid" ] && kill -STOP "$pid"
wait $launcher
code=$?
# The memory rank's guard says so; in tasks, a put that needs the memory
# rank's progress may stop the task graph first, and its watchdog says so.
if [ -n "$pid" ] && [ $code -eq 3 ] && [ "$(grep -c '' "$err")" -eq 1 ] &&
  grep -Eq "memory rank \(rank 2\) has not answered|task graph made no progress" "$err"; then
  echo "ok: a stopped memory rank: exit 3, one line: $(cat "$err")"
else
  echo "FAIL: a stopped memory rank (pid ${pid:-none}): exit $code, stderr:"; cat "$err"; failures=$((failures + 1))
fi
"$expect" 2 "holds no complete snapshot" -- "$ANIMATE" "$WORK/dead.nam" || failures=$((failures + 1))

rm -f "$WORK/dead.nam"
timeout 120 "$MPIEXEC" -q -np 3 --oversubscribe "$HEAT" "${long[@]}" 2>/dev/null &
launcher=$!
pid=$(memory_rank_pid 2)
[ -n "$pid" ] && kill -KILL "$pid"
wait $launcher
code=$?
[ -n "$pid" ] && [ $code -ne 0 ] && echo "ok: a killed memory rank ends the job (mpirun exit $code)" ||
  { echo "FAIL: a killed memory rank (pid ${pid:-none}): exit $code"; failures=$((failures + 1)); }
"$expect" 2 "holds no complete snapshot" -- "$ANIMATE" "$WORK/dead.nam" || failures=$((failures + 1))
exit $((failures > 0))
