#!/usr/bin/env bash
# test_tampi.sh RANKS: the tasks variant on RANKS ranks of 1 thread, in each
# of TAMPI's modes and with each poller, gives the serial matrix bit for bit,
# and its record says how it ran: 1 thread a rank that runs tasks
# (threads 1), no busy helper (helper_threads 0, but 1 with the thread
# poller), in non-blocking mode a team of 1 (the worker: the polling task
# and the submitter are tasks it runs; 2 with the polling thread), and what
# polled.
. "$(dirname "$0")/heat_test_lib.sh"
ranks=$1 steps=12
ref=$(reference $steps)
# field RECORD KEY: a record's top-level or app_data value.
field() {
  python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).readlines()[-1]); d=r['app_data']; \
print(r[sys.argv[2]] if sys.argv[2] in r else d[sys.argv[2]])" "$1" "$2"
}
expect_field() {
  local got
  got=$(field "$1" "$2")
  [ "$got" = "$3" ] && echo "ok: $4: $2 = $got" || { echo "FAIL: $4: $2 = $got, expected $3"; failures=$((failures + 1)); }
}
for mode in nonblocking blocking; do
  for poller in task thread; do
    [ "$mode" = blocking ] && [ "$poller" = thread ] && continue
    what="tampi=$mode poller=$poller ranks=$ranks"
    out="$WORK/$mode.$poller.h5" rec="$WORK/$mode.$poller.json"
    flags=(--tampi "$mode")
    [ "$mode" = nonblocking ] && flags+=(--poller "$poller")
    run "$ranks" 1 tasks --steps $steps --block-rows 7 --block-cols 9 "${flags[@]}" --output "$out" --result "$rec" ||
      { echo "FAIL: $what: the run failed"; failures=$((failures + 1)); continue; }
    same "$what" "$ref" /temperature "$out" /temperature
    expect_field "$rec" threads 1 "$what"
    expect_field "$rec" tampi "$mode" "$what"
    if [ "$mode" = blocking ]; then
      expect_field "$rec" poller none "$what"
      expect_field "$rec" helper_threads 0 "$what"
    else
      expect_field "$rec" poller "$poller" "$what"
      expect_field "$rec" team_threads $([ "$poller" = thread ] && echo 2 || echo 1) "$what"
      expect_field "$rec" helper_threads $([ "$poller" = thread ] && echo 1 || echo 0) "$what"
    fi
    # With messages between ranks, the polling task ran and tested them.
    if [ "$ranks" -gt 1 ] && [ "$mode$poller" = nonblockingtask ]; then
      runs=$(field "$rec" polling_task_runs)
      [ "$runs" -gt 0 ] && echo "ok: $what: the polling task ran $runs times" ||
        { echo "FAIL: $what: the polling task never ran"; failures=$((failures + 1)); }
    fi
  done
done
exit $((failures > 0))
