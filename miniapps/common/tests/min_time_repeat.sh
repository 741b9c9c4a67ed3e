# Sourced by the apps' --min-time tests (crm, stencil, snapshots).
# repeated NAME ARGS...: runs `run_case ARGS... --min-time 0.05` (the caller
# defines run_case, same and fail) into NAME.h5 and NAME.json; the answer
# must equal ref.h5 bit for bit and the timed phase must have run more than
# once ($ran times). The driver stops after a first iteration that alone
# lasts the min-time, which a loaded machine (ctest -j, two OpenMP threads
# on two cores) can make it do: then the case runs again with three times
# that iteration's time (3 tries), its answer checked each time.
repeated() {
  local name=$1 try k first min_time=0.05
  shift
  for try in 1 2 3; do
    run_case "$@" --min-time "$min_time" --output "$name.h5" --result "$name.json" || fail "$name: exit $?"
    same ref.h5 "$name.h5" || fail "$name: --min-time changed the answer"
    read -r k first < <(python3 -c "import json,sys; t=json.loads(open(sys.argv[1]).read().splitlines()[-1])['timing']; print(t['iterations'], t['seconds'][0])" "$name.json")
    [ "$k" -gt 1 ] && { ran=$k; return 0; }
    min_time=$(python3 -c "print(3 * $first)")
    echo "note: $name: one iteration of $first s, no repetition (try $try); again with --min-time $min_time"
  done
  fail "$name: the timed phase never repeated in 3 tries"
}
