#!/bin/bash
# Issue 14's harness cases, one per ctest test (harness.<group>.<case>):
#   lock      a second sweep into a results folder in use is refused (exit 2)
#             naming the first one's pid, and the first one's records stay whole
#   gnuplot   a results.jsonl whose strings try to close gnuplot's quotes and
#             call system() draws its figures and runs nothing
#   sbatch    a results path with a space is quoted in #SBATCH --output=
#   collect   a jobs.json that is not what mapp submit writes is bad input
#   bless     bless names its case and does not replace a baseline without --force
#   bound     check --bound under the exact model is refused, not ignored
#   ranks     more ranks than the environment offers are refused at once
#   list      an app whose --list fails (exit 1, no JSON) is an error, not a crash
# usage: reliability.sh CASE [MAPP_H5_TOOL]
. "$(dirname "$0")/lib.sh"
CASE=${1:?usage: reliability.sh CASE [MAPP_H5_TOOL]}
TOOL=${2:-}

case_lock() {
  require_app heat
  # A stand-in mapp-heat that takes 3 s per run keeps the first sweep (and
  # its lock) alive long enough for the second to meet it.
  mkdir slow
  ln -s "$MAPP" slow/mapp
  cat >slow/mapp-heat <<SH
#!/bin/bash
case " \$* " in *" --list "*) ;; *) sleep 3 ;; esac
exec "$MAPP_BIN_DIR/mapp-heat" "\$@"
SH
  chmod +x slow/mapp-heat
  heat_spec spec.yaml shared 2
  MAPP_BIN_DIR=$SCRATCH/slow "$SCRATCH/slow/mapp" sweep spec.yaml --out res >first.log 2>&1 &
  local first=$!
  for _ in $(seq 100); do
    grep -q "^pid $first " res/shared/.lock 2>/dev/null && break
    sleep 0.1
  done
  grep -q "^pid $first (mapp sweep)" res/shared/.lock || fail "the first sweep did not take the lock: $(cat first.log)"
  expect_exit 2 "$MAPP" sweep spec.yaml --out res
  expect_output "results folder res/shared is in use by pid $first (mapp sweep)"
  expect_one_error_line "$MAPP" sweep spec.yaml --out res --resume
  wait "$first" || fail "the first sweep failed: $(cat first.log)"
  [ "$(count_lines res/shared/results.jsonl)" = 2 ] || fail "the first sweep's records were disturbed"
  # The lock ends with its holder: the folder is free again.
  expect_exit 0 "$MAPP" sweep spec.yaml --out res --resume
  expect_output "2 already done"
}

# Two records (1 and 2 ranks, weak) of an app whose every string is hostile.
case_gnuplot() {
  local pwned=$SCRATCH/pwned
  local app="x'; system('touch $pwned-app'); print '"
  local fom="c'\\n system('touch $pwned-fom') #"
  local variant="v'; system('touch $pwned-variant'); '"
  local dir="res/it's"
  mkdir -p "$dir"
  for n in 1 2; do
    jq -cn --arg app "$app" --arg fom "$fom" --arg variant "$variant" --argjson n $n \
      '{app: $app, variant: $variant, backend: "serial", size: "tiny", scaling: "weak", ranks: $n, threads: 1,
        exit_code: 0, repetition: 0, wall_s: 1, fom: {name: $fom, value: (100 * $n)},
        verification: {status: "pass"}, baseline: {status: "none"}}' >>"$dir/results.jsonl"
  done
  expect_exit 0 "$MAPP" plot "$dir"
  expect_exit 0 "$MAPP" report "$dir"
  ls "$SCRATCH" | grep -q pwned && fail "gnuplot ran a command from results.jsonl: $(ls "$SCRATCH" | grep pwned)"
  local gp
  gp=$(ls "$dir"/plots/*-weak-efficiency.gp) || fail "no weak-efficiency script"
  [ -s "${gp%.gp}.png" ] || fail "the hostile app's figure was not drawn"
  grep -qF "system(''touch $pwned-app'')" "$gp" || fail "the title's quote was not doubled in $gp"
  [ "$(dirname "$gp")" = "$dir/plots" ] || fail "a figure left the plots folder: $gp"
}

case_sbatch() {
  require_app heat
  heat_spec spec.yaml spaced 1
  expect_exit 0 "$MAPP" submit spec.yaml --env "$MAPP_SOURCE_DIR/envs/slurm-example.yaml" --dry-run --out "my results"
  expect_output "#SBATCH --output=\"$SCRATCH/my results/spaced/jobs/heat-mpi-serial-tiny-strong-n1-t1.out\""
  expect_output "#SBATCH --job-name=\"mapp-spaced-heat-mpi-serial-tiny-strong-n1-t1\""
}

case_collect() {
  mkdir -p r
  for doc in '{"jobs":5}' '[]' '{"sweep":"s","runs_dir":"/tmp","repetitions":1,"jobs":[]}' \
             '{"sweep":"s","runs_dir":"/tmp","repetitions":0,"jobs":[{}]}' \
             '{"sweep":"s","runs_dir":"/tmp","repetitions":1,"jobs":[{"stem":"a","app":"heat"}]}' \
             '{"sweep":"s","runs_dir":"/tmp","repetitions":1,"jobs":[{"stem":"a","app":"heat","variant":"mpi","backend":"serial","size":"tiny","scaling":"weak","ranks":0,"threads":1,"launches":[]}]}'; do
    printf '%s\n' "$doc" >r/jobs.json
    expect_exit 2 "$MAPP" collect r
    expect_output "r/jobs.json"
    expect_one_error_line "$MAPP" collect r
  done
  [ ! -e r/results.jsonl ] || fail "a refused collect wrote results"
}

case_bless() {
  require_app heat
  export MAPP_BASELINE_DIR="$SCRATCH/baselines"
  expect_exit 2 "$MAPP" bless heat --reason "no case"
  expect_output "mapp bless needs the case it writes: --size"
  expect_exit 0 "$MAPP" bless heat --size tiny --reason "first"
  local B="$MAPP_BASELINE_DIR/heat/tiny.h5"
  local before
  before=$(sha256sum <"$B")
  expect_exit 2 "$MAPP" bless heat --size tiny --reason "second"
  expect_output "$B exists: pass --force to replace it"
  expect_one_error_line "$MAPP" bless heat --size tiny --reason "second"
  [ "$(sha256sum <"$B")" = "$before" ] || fail "a refused bless changed $B"
  expect_exit 0 "$MAPP" bless heat --size tiny --reason "second" --force
  h5dump -a blessed_reason "$B" | grep -q '"second"' || fail "--force did not replace $B"
}

case_bound() {
  "$TOOL" make exact.h5 temperature 4 5
  expect_exit 2 "$MAPP" check exact.h5 exact.h5 --bound 5
  expect_output "--bound 5 has no meaning under the exact model of dataset 'temperature'"
  expect_one_error_line "$MAPP" check exact.h5 exact.h5 --bound 5
  expect_exit 2 "$MAPP" check exact.h5 exact.h5 --model exact --bound 0
  expect_exit 0 "$MAPP" check exact.h5 exact.h5 --model abs --bound 5
  expect_exit 0 "$MAPP" check exact.h5 exact.h5
}

case_ranks() {
  require_app heat
  local start=$SECONDS
  expect_exit 2 "$MAPP" run heat -n 1048576
  expect_output "1048576 ranks is more than environment local"
  expect_one_error_line "$MAPP" run heat -n 1048576
  [ $((SECONDS - start)) -lt 20 ] || fail "the refusal took $((SECONDS - start)) s"
  expect_exit 2 "$MAPP" bless heat --size tiny -n 100
  expect_output "100 ranks is more than"
  cat >huge.yaml <<'YAML'
name: huge
runs:
  - app: heat
    variants: [mpi]
    ranks: [1, 4096]
YAML
  expect_exit 2 "$MAPP" sweep huge.yaml --out res
  expect_output "4096 ranks is more than"
  [ ! -e res/huge/results.jsonl ] || fail "a refused sweep ran jobs"
  # An environment's max_ranks is the limit it states.
  sed 's/^gpus_per_node: 0/gpus_per_node: 0\nmax_ranks: 2/' "$MAPP_SOURCE_DIR/envs/local.yaml" >two.yaml
  expect_exit 2 "$MAPP" run heat -n 4 --env two.yaml
  expect_output "at most 2"
  expect_exit 0 "$MAPP" run heat -n 2 --env two.yaml --out out
}

case_list() {
  mkdir bin
  ln -s "$MAPP" bin/mapp
  printf '#!/bin/sh\necho "leaked at start-up" >&2\nexit 1\n' >bin/mapp-broken
  chmod +x bin/mapp-broken
  expect_exit 2 env MAPP_BIN_DIR="$SCRATCH/bin" "$SCRATCH/bin/mapp" list
  expect_output "mapp-broken --list failed with exit code 1"
  expect_exit 2 env MAPP_BIN_DIR="$SCRATCH/bin" "$SCRATCH/bin/mapp" run broken
}

declare -F "case_$CASE" >/dev/null || fail "no case '$CASE'"
"case_$CASE"
echo "reliability $CASE: ok"
